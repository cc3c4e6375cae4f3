// Package runout reads the output of one command run in a session (termkeep
// run) from the session's output stream: where it starts and ends, by the
// shell integration's marks (Marked) or by markers the run prints itself
// (Markers), its exit status, and its text as a terminal shows it
// (TextFilter). It does no I/O but writing the text to the writer given.
package runout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"termkeep/internal/shellmark"
	"termkeep/internal/vtscan"
)

// Reader reads a command's output from the session's stream, in order
// from the offset the run started at, and says when it has ended.
type Reader interface {
	// Write takes the output at off, writes the command's output in it
	// to out as text, and reports done with the command's exit code once
	// its end is read (err when its status cannot be known).
	Write(off uint64, p []byte, out io.Writer) (code int, done bool, err error)
}

var (
	_ Reader = (*Marked)(nil)
	_ Reader = (*Markers)(nil)
)

// Typed is what Markers' run types for line: line between a printf of the
// start marker and a printf of the end marker with line's status (status:
// the shell's name for it, $? or fish's $status). The printf formats hold
// %s where the markers hold the token, so the shell's echo of the typed
// line is never taken for a marker.
func Typed(line, token, status string) string {
	return fmt.Sprintf("printf '__tk_start_%%s__\\n' %s; %s; printf '\\n__tk_end_%%s_%%d__\\n' %s %s", token, line, token, status)
}

// Marked finds the command's start (C) and end (D) marks in the output
// after the offset run started at, and prints the text between them.
type Marked struct {
	scan       shellmark.Scanner
	from       uint64
	start, end uint64 // [start, end) is the output; end is max until D
	started    bool
	ended      *shellmark.Mark
	text       TextFilter
}

// NewMarked reads the command whose C mark is the first at or after from,
// in a terminal cols wide.
func NewMarked(from uint64, cols int) *Marked {
	r := &Marked{from: from, end: ^uint64(0), text: TextFilter{Cols: cols}}
	r.scan.Emit = func(m shellmark.Mark) {
		switch {
		case m.Kind == shellmark.Exec && !r.started && m.At >= r.from:
			r.started, r.start = true, m.End
		case m.Kind == shellmark.Done && r.started && r.ended == nil:
			r.ended, r.end = &m, m.At
		}
	}
	return r
}

func (r *Marked) Write(off uint64, p []byte, out io.Writer) (int, bool, error) {
	r.scan.Write(off, time.Time{}, p)
	if r.started {
		lo, hi := max(off, r.start), min(off+uint64(len(p)), r.end)
		if lo < hi {
			if _, err := out.Write(r.text.Filter(p[lo-off : hi-off])); err != nil {
				return 0, true, err
			}
		}
	}
	if r.ended == nil {
		return 0, false, nil
	}
	out.Write(r.text.Flush())
	if r.ended.Status == nil {
		return 1, true, errors.New("the shell did not report the command's exit status")
	}
	return statusCode(*r.ended.Status), true, nil
}

// Range returns the command's output in the log, [start, end): ok once
// its start mark was read; end is max until its end mark is.
func (r *Marked) Range() (start, end uint64, ok bool) { return r.start, r.end, r.started }

// statusCode is the exit code that passes a command's status on.
func statusCode(st int) int {
	if st < 0 || st > 255 {
		return 1
	}
	return st
}

// Markers finds the lines the typed printfs print around the command's
// output, in a shell that reports no marks.
type Markers struct {
	startLine string
	endRE     *regexp.Regexp
	text      TextFilter
	line      []byte // the text of the line being read
	started   bool
	held      []byte // the last whole line of output, printed once the next one comes
	hasHeld   bool
}

// NewMarkers reads the output between the markers of token (Typed), in a
// terminal cols wide.
func NewMarkers(token string, cols int) *Markers {
	return &Markers{
		text:      TextFilter{Cols: cols},
		startLine: "__tk_start_" + token + "__",
		endRE:     regexp.MustCompile(`^__tk_end_` + token + `_(\d+)__$`),
	}
}

func (r *Markers) Write(_ uint64, p []byte, out io.Writer) (int, bool, error) {
	for _, b := range r.text.Filter(p) {
		if b != '\n' {
			r.line = append(r.line, b)
			continue
		}
		l := bytes.TrimRight(r.line, "\r")
		r.line = r.line[:0]
		if !r.started {
			r.started = string(bytes.TrimSpace(l)) == r.startLine
			continue
		}
		if m := r.endRE.FindSubmatch(bytes.TrimSpace(l)); m != nil {
			// The printf's own line break comes before the marker: the
			// line held is the output's last, unless it is that break's.
			if r.hasHeld && len(r.held) > 0 {
				out.Write(append(r.held, '\n'))
			}
			st, _ := strconv.Atoi(string(m[1]))
			return statusCode(st), true, nil
		}
		if r.hasHeld {
			if _, err := out.Write(append(r.held, '\n')); err != nil {
				return 0, true, err
			}
		}
		r.held, r.hasHeld = append(r.held[:0], l...), true
	}
	return 0, false, nil
}

// TextFilter turns terminal output into the lines of text a terminal of
// width cols shows for it: escape sequences dropped; a CR returns to the
// start of the row, so what follows overwrites it (progress bars, zsh's
// mark for a last line with no line break); a long line wraps at cols and
// is kept as one line. Lines come out whole, trailing blanks trimmed.
type TextFilter struct {
	Cols     int // the terminal's width (80 when 0)
	seq      vtscan.Scanner
	utf      []byte // an incomplete UTF-8 sequence
	line     []rune
	rowStart int // index in line of the row the cursor is on
	col      int
	buf      []byte
}

// Filter returns the lines p completes, each with its line break. The
// slice is valid until the next call.
func (t *TextFilter) Filter(p []byte) []byte {
	t.buf = t.buf[:0]
	for _, b := range p {
		if t.seq.Step(b) != vtscan.Text {
			continue
		}
		if b < 0x80 {
			t.flushUTF()
		}
		switch {
		case b == '\n':
			t.endLine()
		case b == '\r':
			t.col = 0
		case b == '\b':
			t.col = max(t.col-1, 0)
		case b == '\t':
			for t.put(' '); t.col%8 != 0 && t.col < t.width(); {
				t.put(' ')
			}
		case b < 0x20 || b == 0x7f:
		case b < 0x80:
			t.put(rune(b))
		default:
			if len(t.utf) > 0 && !utf8.RuneStart(b) || len(t.utf) == 0 {
				t.utf = append(t.utf, b)
			} else {
				t.flushUTF()
				t.utf = append(t.utf, b)
			}
			if utf8.FullRune(t.utf) {
				t.flushUTF()
			}
		}
	}
	return t.buf
}

// flushUTF puts the UTF-8 sequence collected: its character, or U+FFFD
// for each byte that starts none.
func (t *TextFilter) flushUTF() {
	for len(t.utf) > 0 {
		r, n := utf8.DecodeRune(t.utf)
		t.put(r)
		t.utf = t.utf[n:]
	}
	t.utf = t.utf[:0]
}

func (t *TextFilter) width() int {
	if t.Cols <= 0 {
		return 80
	}
	return t.Cols
}

// put writes r at the cursor, wrapping at the row's end.
func (t *TextFilter) put(r rune) {
	if t.col >= t.width() {
		t.rowStart += t.width()
		t.col = 0
	}
	i := t.rowStart + t.col
	for len(t.line) < i {
		t.line = append(t.line, ' ')
	}
	if i < len(t.line) {
		t.line[i] = r
	} else {
		t.line = append(t.line, r)
	}
	t.col++
}

func (t *TextFilter) endLine() {
	t.buf = append(t.buf, strings.TrimRight(string(t.line), " ")...)
	t.buf = append(t.buf, '\n')
	t.line, t.rowStart, t.col = t.line[:0], 0, 0
}

// Flush returns the last line when it has no line break, or nothing when
// it is blank.
func (t *TextFilter) Flush() []byte {
	t.flushUTF()
	s := strings.TrimRight(string(t.line), " ")
	t.line, t.rowStart, t.col = t.line[:0], 0, 0
	return []byte(s)
}
