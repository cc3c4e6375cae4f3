// Package export turns a session's output log into what people keep and
// share: an asciicast v2 recording (cast), the rendered text of its
// scrollback and screen (txt), a self-contained HTML page of the same
// (html), or the exact bytes (raw); and searches the whole log line by line
// (Grep).
//
// What it guarantees:
//
//   - It reads a log only through outlog's reading API (Log.Chunks) and
//     writes only to the io.Writer it is given: no files, no goroutines, no
//     clock. A log opened read-only while its holder writes it is fine; the
//     range is what it was when the export began.
//   - A gap in the log (bytes retention dropped, a damaged segment, bytes
//     never logged because the disk was full) is never glued over: cast,
//     txt and html show a line such as
//     "[termkeep: 1234 bytes not logged (disk full)]" where it was, raw
//     writes nothing for it, and every format reports it in Result.Gaps.
//   - Nor is history txt and html cannot keep (Options.MaxLines): the
//     lines over it are left out at the top, under a line such as
//     "[termkeep: 1899976 lines left out (more history than the export
//     keeps: --max-lines 100000)]", and counted in Result.LinesLeftOut.
//   - With a Redactor, secrets are replaced before any byte is written (see
//     Redactor for how, and what it finds); without one, the output holds
//     what the session printed.
//   - cast events carry the data as valid UTF-8 (a character split between
//     two chunks is carried to the next; an invalid byte becomes U+FFFD):
//     their concatenation is the log's bytes decoded as UTF-8.
package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"termkeep/internal/outlog"
)

// Format is an export's file format.
type Format string

const (
	Cast Format = "cast" // asciicast v2: a recording asciinema plays
	Text Format = "txt"  // the rendered text of the scrollback and screen
	HTML Format = "html" // the same, with colors and attributes, as a web page
	Raw  Format = "raw"  // the exact bytes
)

// Formats lists every format, in the order help texts give them.
var Formats = []Format{Cast, Text, HTML, Raw}

// ParseFormat returns the format named s, or an error that lists them.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	if s == "" {
		return "", fmt.Errorf("no export format given; the formats are %s", strings.Join(names, ", "))
	}
	return "", fmt.Errorf("unknown export format %q; the formats are %s", s, strings.Join(names, ", "))
}

// RedactsByDefault reports whether an export in f hides secrets unless told
// not to: the formats made for sharing do (cast, txt, html); raw, the exact
// bytes, does not.
func (f Format) RedactsByDefault() bool { return f != Raw }

// ContentType is the MIME type of f.
func (f Format) ContentType() string {
	switch f {
	case Cast:
		return "application/x-asciicast"
	case Text:
		return "text/plain; charset=utf-8"
	case HTML:
		return "text/html; charset=utf-8"
	}
	return "application/octet-stream"
}

// Log is what an export reads of an output log.
type Log interface {
	// Chunks walks [lo, hi) as outlog.Log.Chunks does.
	Chunks(lo, hi uint64, fn func(outlog.Chunk) error) error
}

var _ Log = (*outlog.Log)(nil)

// Options say what to export.
type Options struct {
	Format   Format
	From, To uint64    // the range of offsets, [From, To)
	Redactor *Redactor // nil: the output as it was printed
	Title    string    // the recording's or the page's title (the session's name)
	Shell    string    // cast: the SHELL in the header's env, when known
	// MaxLines bounds the history txt and html keep above the screen:
	// 0 means DefaultMaxLines, a negative number no limit. The lines over
	// it are left out at the top, and a line there (CutLine) says so.
	MaxLines int
	// Progress, when set, is called as the export goes with how much of
	// its work is done, in bytes of log read, out of total (the range,
	// twice for a redacted cast, which reads it twice).
	Progress func(done, total uint64)
}

// Result is what an export met on its way.
type Result struct {
	Gaps []outlog.Gap // the ranges it could not read, in order
	// LinesLeftOut is how many of the oldest lines of history txt and
	// html left out, over Options.MaxLines.
	LinesLeftOut int
}

// Export writes the range of l in opts.Format to w. It returns the gaps it
// met; an error is from l (other than a gap) or from w, and leaves w with
// part of the export.
func Export(w io.Writer, l Log, opts Options) (Result, error) {
	if opts.To < opts.From {
		return Result{}, fmt.Errorf("export: range [%d, %d) ends before it starts", opts.From, opts.To)
	}
	r := &run{l: l, opts: opts, passes: 1}
	var err error
	switch opts.Format {
	case Cast:
		if opts.Redactor != nil {
			r.passes = 2
		}
		err = r.cast(w)
	case Text, HTML:
		err = r.screen(w)
	case Raw:
		err = r.raw(w)
	default:
		_, err = ParseFormat(string(opts.Format))
	}
	return r.res, err
}

// run is one export's walk through the log.
type run struct {
	l      Log
	opts   Options
	res    Result
	pass   uint64
	passes uint64
}

// chunks walks the range once, reporting progress, and recording its gaps
// on the last pass.
func (r *run) chunks(fn func(outlog.Chunk) error) error {
	span := r.opts.To - r.opts.From
	base, last := r.pass*span, r.pass+1 == r.passes
	total := r.passes * span
	r.pass++
	if r.opts.Progress != nil {
		r.opts.Progress(base, total)
	}
	err := r.l.Chunks(r.opts.From, r.opts.To, func(c outlog.Chunk) error {
		var end uint64
		switch c.Kind {
		case outlog.ChunkGap:
			if last {
				r.res.Gaps = append(r.res.Gaps, outlog.GapOf(c))
			}
			end = c.End
		case outlog.ChunkData:
			end = c.Offset + uint64(len(c.Data))
		}
		if err := fn(c); err != nil {
			return err
		}
		if r.opts.Progress != nil && end > r.opts.From {
			r.opts.Progress(base+min(end, r.opts.To)-r.opts.From, total)
		}
		return nil
	})
	if err == nil && r.opts.Progress != nil {
		r.opts.Progress(base+span, total)
	}
	return err
}

// raw writes the bytes as they are (redacted when asked).
func (r *run) raw(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	write := func(_ uint64, p []byte) error {
		_, err := bw.Write(p)
		return err
	}
	if r.opts.Redactor != nil {
		write = redacted(r.opts.Redactor, write)
	}
	err := r.chunks(func(c outlog.Chunk) error {
		if c.Kind == outlog.ChunkData {
			return write(c.Offset, c.Data)
		}
		return nil
	})
	if err == nil {
		err = write(r.opts.To, nil) // ends the last line
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// redacted wraps a writer of the stream's bytes (at their offsets) so that
// what reaches it is redacted: whole lines at a time. A write at an offset
// that does not follow the last (a gap, or the end) ends the line.
func redacted(red *Redactor, write func(off uint64, p []byte) error) func(off uint64, p []byte) error {
	var scratch []byte
	s := red.stream(func(off uint64, line []byte, edits []edit) error {
		if len(edits) == 0 {
			return write(off, line)
		}
		scratch = applyEdits(scratch[:0], line, edits)
		return write(off, scratch)
	})
	return func(off uint64, p []byte) error {
		if len(p) == 0 {
			return s.flush()
		}
		return s.write(off, p)
	}
}

// Bound is one end of an export's range as a user gives it: an offset, or
// a time.
type Bound struct {
	Offset uint64
	Time   time.Time // when IsTime
	IsTime bool
}

// ParseBound reads an offset (digits), an RFC 3339 time, or a duration
// before now ("-10m"; "10m" means the same).
func ParseBound(s string, now time.Time) (Bound, error) {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		off, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Bound{}, fmt.Errorf("offset %s is out of range", s)
		}
		return Bound{Offset: off}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return Bound{Time: t, IsTime: true}, nil
	}
	if d, err := time.ParseDuration(strings.TrimPrefix(s, "-")); err == nil && !strings.HasPrefix(s, "+") {
		return Bound{Time: now.Add(-d), IsTime: true}, nil
	}
	return Bound{}, fmt.Errorf("%q is not an offset, an RFC 3339 time or a duration such as -10m", s)
}

// String gives b as ParseBound reads it back.
func (b Bound) String() string {
	if b.IsTime {
		return b.Time.Format(time.RFC3339Nano)
	}
	return strconv.FormatUint(b.Offset, 10)
}

// Resolve returns b's offset in l: a time is the first byte logged at or
// after it, by the log's Time records (clamped to what is retained).
func (b Bound) Resolve(l *outlog.Log) (uint64, error) {
	if !b.IsTime {
		return b.Offset, nil
	}
	return l.OffsetAt(b.Time)
}
