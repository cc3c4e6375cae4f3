// Package termq decides which answers to the terminal's questions reach a
// session's program.
//
// Programs ask their terminal questions: device attributes (ESC [ c), the
// cursor position (ESC [ 6 n), the status (ESC [ 5 n), colours (OSC 10/11/12
// with "?"). Every attached terminal answers, so without care a program gets
// one answer per viewer, and a viewer replaying old output or drawing a
// snapshot answers questions nobody is asking any more (the answers then
// land in the shell as typed garbage). A read-only viewer must not reach the
// program at all, answers included.
//
// The package has three parts, each a pure function of its input: the
// Scanner finds questions in the output, the answer grammar (Filter,
// OnlyAnswers) tells a viewer's answers from its typing, and the Arbiter
// decides who answers each question. It guarantees:
//
//   - At most one answer to each question reaches the program: the first,
//     whoever sends it; every later one is dropped.
//   - Input counts as an answer only in the exact form real terminals send,
//     whole within one input frame; anything else is typing.
//   - A read-only viewer never answers: its answers are never offered.
//   - A question that no writable viewer will see (none is attached, the
//     only ones came after it, or the last one left before answering) is
//     handed to the caller's screen model, so a program never hangs.
//   - A question waits at most TTL for its answer, and at most MaxPending
//     questions wait: past that, a flood goes unanswered, as with a busy
//     terminal.
//
// Nothing here does I/O, starts a goroutine or reads the clock: the caller
// passes the time in, holds its own lock around the Arbiter, and writes
// what it is told to forward.
package termq

import "strconv"

// Kind is a kind of terminal question, and of the answer to it.
type Kind uint8

const (
	None        Kind = iota
	DA1              // ESC [ c, ESC [ 0 c: primary device attributes
	DA2              // ESC [ > c, ESC [ > 0 c: secondary device attributes
	Status           // ESC [ 5 n: operating status
	Cursor           // ESC [ 6 n: cursor position report
	Foreground       // OSC 10 ; ?
	Background       // OSC 11 ; ?
	CursorColor      // OSC 12 ; ?
)

var kindNames = [...]string{None: "none", DA1: "da1", DA2: "da2", Status: "status", Cursor: "cursor",
	Foreground: "fg", Background: "bg", CursorColor: "cursor-color"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind" + strconv.Itoa(int(k))
}
