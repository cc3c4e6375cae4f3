// Package shellmark reads the marks a shell's integration prints (OSC 133:
// A a prompt starts, B the prompt ends and the command line follows, C the
// command starts, D;STATUS it ended) and follows from them what the shell
// is doing: at its prompt, running a command (which one, since when), and
// how the last command ended and where its output lies in the log.
//
// It does no I/O and keeps no clock: the caller feeds it the bytes with
// their offsets and the time they arrived. One parser serves the live
// server (Tracker) and the reading of logs (package replay), so both take
// the same bytes for the same marks.
package shellmark

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"termkeep/internal/vtscan"
)

// Bounds of what is kept of a command line.
const (
	maxLineBytes = 4096 // of a command line's text, edits included
	MaxLabel     = 200  // characters of a label
)

// Kind is which OSC 133 mark a Mark is.
type Kind byte

const (
	Prompt Kind = 'A' // a prompt starts
	Input  Kind = 'B' // the prompt ends: what follows is the command line
	Exec   Kind = 'C' // the command line was accepted: its output follows
	Done   Kind = 'D' // the command ended; Status is its exit status
)

// Mark is one OSC 133 mark found in the stream.
type Mark struct {
	Kind Kind
	At   uint64    // offset of the ESC that began the mark
	End  uint64    // offset just after the mark's last byte
	Time time.Time // when the bytes holding its ESC arrived
	// Status is a Done mark's exit status, when it carries one.
	Status *int
	// Label is an Exec mark's command line: the text between B and C, as
	// typed (a backspace erases), trimmed; "" when no B came before it.
	Label string
}

// Scanner finds OSC 133 marks in a byte stream fed in pieces of any size
// (a sequence may be split anywhere). It follows escape sequences as
// xterm.js does (vtscan), so that what it takes for text, and for a mark,
// is what a terminal takes for them; controls inside a sequence are
// executed, a backspace erases the character before it. The zero value,
// with Emit set, is ready.
type Scanner struct {
	Emit func(Mark) // called with each mark found, in order
	// Text makes the scanner collect all the text (Label), not only a
	// command line's, and act on no mark: for reading a banner.
	Text bool

	seq     vtscan.Scanner
	seqAt   uint64    // offset of the ESC that began the current sequence
	seqTime time.Time // and its time

	typing bool       // between B and C: the bytes are the command line
	line   lineBuffer // its text

	// pending is a mark whose OSC an ESC ended: it ends after the ST's
	// backslash when one follows, else before the ESC.
	pending    Mark
	hasPending bool
}

// Reset forgets a sequence in progress and the command line: what follows
// a gap or a restore does not continue them.
func (s *Scanner) Reset() {
	if s.hasPending {
		s.emit(s.pending)
	}
	s.seq, s.typing, s.line, s.hasPending = vtscan.Scanner{}, false, lineBuffer{}, false
}

// Label returns the text collected so far (Text), trimmed as a label.
func (s *Scanner) Label() string { return s.line.label() }

// Write scans p, the bytes at offset off that arrived at t.
func (s *Scanner) Write(off uint64, t time.Time, p []byte) {
	for i := 0; i < len(p); i++ {
		if s.seq.Ground() && !s.typing && !s.Text && !s.hasPending {
			// Most output is text nobody collects: only an ESC matters.
			j := bytes.IndexByte(p[i:], 0x1b)
			if j < 0 {
				return
			}
			i += j
		}
		s.step(p[i], off+uint64(i), t)
	}
}

func (s *Scanner) step(b byte, at uint64, t time.Time) {
	k := s.seq.Step(b)
	if s.hasPending {
		s.hasPending = false
		if k == vtscan.Esc && s.seq.Final == '\\' {
			s.pending.End = at + 1
		}
		s.emit(s.pending)
	}
	switch k {
	case vtscan.Text:
		if s.typing || s.Text {
			s.line.put(b)
		}
	case vtscan.OSC:
		s.dispatch(s.seq.Payload(), at, b == 0x1b)
	}
	if b == 0x1b {
		s.seqAt, s.seqTime = at, t
	}
}

// dispatch acts on a whole OSC whose last byte is at at; byESC says an ESC
// ended it (ST, or a new sequence), the ESC at at.
func (s *Scanner) dispatch(payload []byte, at uint64, byESC bool) {
	fields := strings.Split(string(payload), ";")
	if s.Text || len(fields) < 2 || fields[0] != "133" || len(fields[1]) != 1 {
		return
	}
	m := Mark{Kind: Kind(fields[1][0]), At: s.seqAt, End: at + 1, Time: s.seqTime}
	switch m.Kind {
	case Prompt:
		s.typing = false
	case Input:
		s.typing, s.line = true, lineBuffer{}
	case Exec:
		if s.typing {
			m.Label = s.line.label()
		}
		s.typing = false
	case Done:
		s.typing = false
		if len(fields) > 2 {
			if st, err := strconv.Atoi(fields[2]); err == nil {
				m.Status = &st
			}
		}
	default:
		return
	}
	if byESC {
		m.End = at
		s.pending, s.hasPending = m, true
		return
	}
	s.emit(m)
}

func (s *Scanner) emit(m Mark) {
	if s.Emit != nil {
		s.Emit(m)
	}
}

// lineBuffer collects the text of a line as typed: printable characters,
// a backspace erasing the one before, a line break a space (a command line
// continued on the next line is still one command).
type lineBuffer struct{ b []byte }

func (l *lineBuffer) put(c byte) {
	switch {
	case c == 0x08:
		_, n := utf8.DecodeLastRune(l.b)
		l.b = l.b[:len(l.b)-n]
	case c == '\r' || c == '\n' || c == '\t':
		if len(l.b) > 0 && l.b[len(l.b)-1] != ' ' && len(l.b) < maxLineBytes {
			l.b = append(l.b, ' ')
		}
	case c >= 0x20 && c != 0x7f && len(l.b) < maxLineBytes:
		l.b = append(l.b, c)
	}
}

// label is the text trimmed, as valid UTF-8, at most MaxLabel characters.
func (l *lineBuffer) label() string {
	s := string(bytes.ToValidUTF8(bytes.TrimSpace(l.b), []byte("\uFFFD")))
	if utf8.RuneCountInString(s) > MaxLabel {
		s = strings.TrimSpace(string([]rune(s)[:MaxLabel]))
	}
	return s
}
