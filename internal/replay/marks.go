package replay

import (
	"bytes"
	"strconv"
	"strings"
	"termkeep/internal/vtscan"
	"time"
	"unicode/utf8"
)

// Bounds of what is kept of a command line.
const (
	maxLineBytes = 4096 // of a command line's text, edits included
	maxLabel     = 200  // characters of a label
)

// marks finds the shell integration's OSC 133 marks in a byte stream fed
// in pieces of any size (a sequence may be split anywhere): C (a command
// starts: a command marker whose label is the command line, the text
// between the prompt's end, B, and C) and D (it ended: a done marker with
// its status). It follows escape sequences as xterm.js does (vtscan), so
// that what it takes for text, and for a mark, is what a terminal takes
// for them; controls inside a sequence are executed, a backspace erases
// the character before it.
type marks struct {
	emit func(Marker) // called with each mark found
	// text collects all the text, not a command line's only (a mark
	// record's banner), and acts on no mark.
	text bool

	seq     vtscan.Scanner
	seqAt   uint64    // offset of the ESC that began the current sequence
	seqTime time.Time // and its time

	typing bool       // between B and C: the bytes are the command line
	line   lineBuffer // its text
}

// reset forgets a sequence in progress and the command line: what follows
// a gap or a restore does not continue them.
func (m *marks) reset() {
	m.seq, m.typing, m.line = vtscan.Scanner{}, false, lineBuffer{}
}

// write scans p, the bytes at offset off logged at t.
func (m *marks) write(off uint64, t time.Time, p []byte) {
	for i := 0; i < len(p); i++ {
		if m.seq.Ground() && !m.typing && !m.text {
			// Most output is text nobody collects: only an ESC matters.
			j := bytes.IndexByte(p[i:], 0x1b)
			if j < 0 {
				return
			}
			i += j
		}
		m.step(p[i], off+uint64(i), t)
	}
}

func (m *marks) step(b byte, at uint64, t time.Time) {
	switch m.seq.Step(b) {
	case vtscan.Text:
		if m.typing || m.text {
			m.line.put(b)
		}
	case vtscan.OSC:
		m.dispatch(m.seq.Payload())
	}
	if b == 0x1b {
		m.seqAt, m.seqTime = at, t
	}
}

// dispatch acts on a whole OSC.
func (m *marks) dispatch(payload []byte) {
	fields := strings.Split(string(payload), ";")
	if m.text || len(fields) < 2 || fields[0] != "133" {
		return
	}
	switch fields[1] {
	case "A":
		m.typing = false
	case "B":
		m.typing, m.line = true, lineBuffer{}
	case "C":
		label := ""
		if m.typing {
			label = m.line.label()
		}
		m.typing = false
		m.emit(Marker{Kind: KindCommand, Offset: m.seqAt, Time: m.seqTime, Label: label})
	case "D":
		m.typing = false
		mk := Marker{Kind: KindDone, Offset: m.seqAt, Time: m.seqTime}
		if len(fields) > 2 {
			if st, err := strconv.Atoi(fields[2]); err == nil {
				mk.Status = &st
			}
		}
		m.emit(mk)
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

// label is the text trimmed, as valid UTF-8, at most maxLabel characters.
func (l *lineBuffer) label() string {
	s := string(bytes.ToValidUTF8(bytes.TrimSpace(l.b), []byte("\uFFFD")))
	if utf8.RuneCountInString(s) > maxLabel {
		s = strings.TrimSpace(string([]rune(s)[:maxLabel]))
	}
	return s
}
