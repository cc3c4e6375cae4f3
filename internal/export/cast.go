package export

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"termkeep/internal/outlog"
)

// castHeader is an asciicast v2 header line.
type castHeader struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp,omitempty"`
	Title     string            `json:"title,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

// cast writes an asciicast v2 recording: a header line, then one output
// event per logged chunk at the (log) time of the Time record in force for
// it, a resize event at each size change, and a marker event where the
// wall clock was set back or forward, saying by how much. With a Redactor it reads the
// range twice: first to find the secrets (a line is only known to hold one
// once it has ended), then to write the events with them replaced, so each
// event keeps its own time.
func (r *run) cast(w io.Writer) error {
	var edits []edit
	if red := r.opts.Redactor; red != nil {
		s := red.stream(func(off uint64, _ []byte, line []edit) error {
			for _, e := range line {
				e.off += off
				edits = append(edits, e)
			}
			return nil
		})
		err := r.chunks(func(c outlog.Chunk) error {
			if c.Kind == outlog.ChunkData {
				return s.write(c.Offset, c.Data)
			}
			return nil
		})
		if err == nil {
			err = s.flush()
		}
		if err != nil {
			return err
		}
	}
	ec := &editCursor{edits: edits}
	enc := &castEncoder{w: bufio.NewWriterSize(w, 64<<10)}
	enc.hdr = castHeader{Version: 2, Title: r.opts.Title, Env: map[string]string{"TERM": "xterm-256color"}}
	if r.opts.Shell != "" {
		enc.hdr.Env["SHELL"] = r.opts.Shell
	}
	var data []byte
	var steps outlog.ClockSteps
	err := r.chunks(func(c outlog.Chunk) error {
		if d, ok := steps.Step(c); ok {
			if err := enc.marker(c.Time, outlog.ClockStepLabel(d)); err != nil {
				return err
			}
		}
		switch c.Kind {
		case outlog.ChunkSize:
			return enc.size(c.Time, c.Cols, c.Rows)
		case outlog.ChunkData:
			data = ec.apply(data[:0], c.Offset, c.Data)
			return enc.output(c.Time, data)
		case outlog.ChunkGap:
			return enc.gap(c.Time, outlog.GapOf(c).Line())
		}
		return nil
	})
	if cerr := enc.close(); err == nil {
		err = cerr
	}
	return err
}

// castEncoder writes asciicast v2 lines.
type castEncoder struct {
	w       *bufio.Writer
	hdr     castHeader
	started bool      // the header is written
	base    time.Time // time 0: of the first event that has a time
	last    float64   // the last event's time: times never go back
	lastAt  time.Time
	carry   []byte // an incomplete UTF-8 character at the end of the last chunk
	buf     []byte
	line    []byte
}

// size records the terminal size: the header's until the first event, a
// resize event after.
func (e *castEncoder) size(at time.Time, cols, rows uint16) error {
	if !e.started {
		e.hdr.Width, e.hdr.Height = int(cols), int(rows)
		return nil
	}
	return e.event(at, 'r', []byte(strconv.Itoa(int(cols))+"x"+strconv.Itoa(int(rows))))
}

// output writes data as an output event, holding back an incomplete UTF-8
// character at its end for the next one.
func (e *castEncoder) output(at time.Time, data []byte) error {
	b := data
	if len(e.carry) > 0 {
		e.buf = append(append(e.buf[:0], e.carry...), data...)
		b = e.buf
	}
	n := completeUTF8(b)
	e.carry = append(e.carry[:0], b[n:]...)
	if n == 0 {
		return nil
	}
	return e.event(at, 'o', b[:n])
}

// marker writes a marker event: a moment a player lists with its label.
func (e *castEncoder) marker(at time.Time, label string) error {
	return e.event(at, 'm', []byte(label))
}

// gap writes the line that stands for a gap, on a line of its own, after
// whatever incomplete character came before it (as U+FFFD: it is not
// completed by what follows the gap).
func (e *castEncoder) gap(at time.Time, line string) error {
	b := append(append(e.buf[:0], e.carry...), "\r\n"+line+"\r\n"...)
	e.buf, e.carry = b, e.carry[:0]
	return e.event(at, 'o', b)
}

// close writes what is left and flushes.
func (e *castEncoder) close() error {
	var err error
	if len(e.carry) > 0 {
		err = e.event(e.lastAt, 'o', e.carry)
		e.carry = e.carry[:0]
	}
	if !e.started && err == nil {
		err = e.header()
	}
	if ferr := e.w.Flush(); err == nil {
		err = ferr
	}
	return err
}

func (e *castEncoder) header() error {
	e.started = true
	if !e.base.IsZero() {
		e.hdr.Timestamp = e.base.Unix()
	}
	b, err := json.Marshal(e.hdr)
	if err != nil {
		return err
	}
	_, err = e.w.Write(append(b, '\n'))
	return err
}

// event writes [t, "typ", data], data as a JSON string (an invalid UTF-8
// byte becomes U+FFFD).
func (e *castEncoder) event(at time.Time, typ byte, data []byte) error {
	if e.base.IsZero() && !at.IsZero() {
		e.base = at
	}
	if !e.started {
		if err := e.header(); err != nil {
			return err
		}
	}
	t := e.last
	if !at.IsZero() {
		t = max(t, at.Sub(e.base).Seconds())
		e.lastAt = at
	}
	e.last = t
	b := append(e.line[:0], '[')
	b = strconv.AppendFloat(b, t, 'f', 6, 64)
	b = append(b, ", \""...)
	b = append(b, typ)
	b = append(b, "\", "...)
	b = appendJSONString(b, data)
	b = append(b, "]\n"...)
	e.line = b
	_, err := e.w.Write(b)
	return err
}

// completeUTF8 returns the length of the longest prefix of b that does not
// end inside a UTF-8 character that more bytes could complete.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// appendJSONString appends s as a JSON string, each byte that is not part
// of valid UTF-8 as U+FFFD.
func appendJSONString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
