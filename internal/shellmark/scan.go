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
	maxLineBytes = 4096     // of a command line's text, edits included
	MaxLabel     = 200      // characters of a label
	maxSlow      = 64 << 10 // bytes of a prompt and its command line, escape sequences included
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
	// prompting is set between A and B: the prompt's text is counted, so
	// that a line editor's return to the row's start (CR, then a move
	// right past the prompt) lands where the command line starts.
	prompting bool
	promptCol int
	// slow counts the bytes read one by one for the prompt or the command
	// line since A or B: past maxSlow the marks were not a shell's (a file
	// printed with an A or a B in it), and the scanner goes back to looking
	// at ESCs only, so that output costs what it costs without marks.
	slow int

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
	s.seq, s.typing, s.line, s.hasPending, s.prompting = vtscan.Scanner{}, false, lineBuffer{}, false, false
}

// Label returns the text collected so far (Text), trimmed as a label.
func (s *Scanner) Label() string { return s.line.label() }

// Write scans p, the bytes at offset off that arrived at t.
func (s *Scanner) Write(off uint64, t time.Time, p []byte) {
	for i := 0; i < len(p); i++ {
		if s.seq.Ground() && !s.typing && !s.prompting && !s.Text && !s.hasPending {
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
	if s.typing || s.prompting {
		if s.slow++; s.slow > maxSlow {
			s.typing, s.prompting, s.line = false, false, lineBuffer{}
		}
	}
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
		switch {
		case s.typing || s.Text:
			s.line.put(b)
		case s.prompting:
			s.promptCol = promptColumn(s.promptCol, b)
		}
	case vtscan.CSI:
		if s.typing {
			s.line.csi(s.seq.Final, s.seq.Param(0, 1), s.seq.Param(0, 0))
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
		s.typing, s.prompting, s.promptCol, s.slow = false, true, 0, 0
	case Input:
		s.typing, s.line, s.slow = true, lineBuffer{start: s.promptCol}, 0
		s.prompting = false
	case Exec:
		if s.typing {
			m.Label = s.line.label()
		}
		s.typing, s.prompting = false, false
	case Done:
		s.typing, s.prompting = false, false
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

// promptColumn is the column after b, at col on a prompt's row.
func promptColumn(col int, b byte) int {
	switch {
	case b == '\r' || b == '\n':
		return 0
	case b == 0x08:
		return max(col-1, 0)
	case b >= 0x20 && b != 0x7f && (b < 0x80 || utf8.RuneStart(b)):
		return min(col+1, maxLineBytes)
	}
	return col
}

// lineBuffer is the command line as a line editor draws it: characters
// written at a cursor that backspace, CR and cursor moves (CSI C, D, G)
// place, erasures (CSI K, P) and insertions (CSI @), so a line redrawn in
// place (zsh's and fish's highlighting, a paste shown in reverse) reads
// once. Columns count from the prompt's end (start is the prompt's
// width); a line break continues the line after a space (a command line
// on several lines is still one command).
type lineBuffer struct {
	cells []rune
	col   int // the cursor, from the prompt's end; negative over the prompt
	start int
	utf   []byte // an incomplete UTF-8 sequence
}

func (l *lineBuffer) put(c byte) {
	if c < 0x80 || utf8.RuneStart(c) {
		l.flushUTF()
	}
	switch {
	case c == 0x08:
		l.col = max(l.col-1, -l.start)
	case c == '\r':
		l.col = -l.start
	case c == '\n':
		l.col = len(l.cells)
		if l.col > 0 && l.cells[l.col-1] != ' ' {
			l.write(' ')
		}
	case c == '\t':
		l.write(' ')
	case c < 0x20 || c == 0x7f:
	case c < 0x80:
		l.write(rune(c))
	default:
		l.utf = append(l.utf, c)
		if utf8.FullRune(l.utf) || len(l.utf) >= utf8.UTFMax {
			l.flushUTF()
		}
	}
}

// flushUTF writes the UTF-8 sequence collected: its character, or U+FFFD.
func (l *lineBuffer) flushUTF() {
	for len(l.utf) > 0 {
		r, n := utf8.DecodeRune(l.utf)
		l.write(r)
		l.utf = l.utf[n:]
	}
	l.utf = nil
}

// write puts r at the cursor and moves it right.
func (l *lineBuffer) write(r rune) {
	if l.col >= 0 && l.col < maxLineBytes {
		for len(l.cells) < l.col {
			l.cells = append(l.cells, ' ')
		}
		if l.col < len(l.cells) {
			l.cells[l.col] = r
		} else {
			l.cells = append(l.cells, r)
		}
	}
	l.col = min(l.col+1, maxLineBytes)
}

// csi acts on a CSI with final byte f, its first parameter n (1 when
// absent) and n0 (0 when absent).
func (l *lineBuffer) csi(f byte, n, n0 int) {
	n = max(n, 1)
	switch f {
	case 'C':
		l.col = min(l.col+n, maxLineBytes)
	case 'D':
		l.col = max(l.col-n, -l.start)
	case 'G':
		l.col = min(n-1-l.start, maxLineBytes)
	case 'K':
		if n0 == 0 && l.col >= 0 && l.col < len(l.cells) {
			l.cells = l.cells[:l.col]
		}
	case 'P':
		if l.col >= 0 && l.col < len(l.cells) {
			l.cells = append(l.cells[:l.col], l.cells[min(l.col+n, len(l.cells)):]...)
		}
	case '@':
		if l.col >= 0 && l.col < len(l.cells) {
			n = min(n, maxLineBytes-len(l.cells))
			l.cells = append(l.cells[:l.col], append([]rune(strings.Repeat(" ", max(n, 0))), l.cells[l.col:]...)...)
		}
	}
}

// label is the text trimmed, at most MaxLabel characters.
func (l *lineBuffer) label() string {
	l.flushUTF()
	s := strings.TrimSpace(string(l.cells))
	if utf8.RuneCountInString(s) > MaxLabel {
		s = strings.TrimSpace(string([]rune(s)[:MaxLabel]))
	}
	return s
}
