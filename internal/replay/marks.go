package replay

import (
	"termkeep/internal/shellmark"
	"time"
)

// maxLabel bounds a marker's label, in characters.
const maxLabel = shellmark.MaxLabel

// marks turns the shell integration's OSC 133 marks (parsed by package
// shellmark, as the server's live tracker parses them) into markers: C (a
// command starts: a command marker whose label is the command line) and D
// (it ended: a done marker with its status).
type marks struct {
	emit func(Marker) // called with each mark found
	// text collects all the text, not a command line's only (a mark
	// record's banner), and acts on no mark.
	text bool

	sc    shellmark.Scanner
	ready bool
}

func (m *marks) scanner() *shellmark.Scanner {
	if !m.ready {
		m.sc.Emit, m.sc.Text, m.ready = m.found, m.text, true
	}
	return &m.sc
}

// reset forgets a sequence in progress and the command line: what follows
// a gap or a restore does not continue them.
func (m *marks) reset() { m.scanner().Reset() }

// write scans p, the bytes at offset off logged at t.
func (m *marks) write(off uint64, t time.Time, p []byte) { m.scanner().Write(off, t, p) }

// label is the text collected (text).
func (m *marks) label() string { return m.scanner().Label() }

func (m *marks) found(mk shellmark.Mark) {
	switch mk.Kind {
	case shellmark.Exec:
		m.emit(Marker{Kind: KindCommand, Offset: mk.At, Time: mk.Time, Label: mk.Label})
	case shellmark.Done:
		m.emit(Marker{Kind: KindDone, Offset: mk.At, Time: mk.Time, Status: mk.Status})
	}
}
