package session

import (
	"bytes"
	"fmt"
	"sync"
	"time"
)

// Programs ask their terminal questions: device attributes (ESC [ c), the
// cursor position (ESC [ 6 n), the status (ESC [ 5 n), colors (OSC 10/11/12
// with "?"). Every attached terminal answers, so without care a program gets
// one answer per viewer, and a viewer replaying old output or applying a
// snapshot answers questions nobody is asking any more (the answers then
// land in the shell as typed garbage).
//
// The arbiter keeps the questions the session's output has asked and not yet
// had answered. Each answer a writable viewer sends is matched to its
// question by grammar (answers.go): the first answer to an outstanding
// question is forwarded, every other one is dropped. A read-only viewer
// sends nothing to the pty, answers included; a question that no writable
// viewer will see (none is attached, or the only ones came after it, or the
// last one left before answering) is answered by the host from its screen
// model, so a program never hangs and a read-only viewer never has to
// answer. Whoever answers first, the arbiter lets one answer through.

// queryKind is a kind of terminal question.
type queryKind uint8

const (
	qNone        queryKind = iota
	qDA1                   // ESC [ c, ESC [ 0 c: primary device attributes
	qDA2                   // ESC [ > c, ESC [ > 0 c: secondary device attributes
	qStatus                // ESC [ 5 n: operating status
	qCursor                // ESC [ 6 n: cursor position report
	qFg                    // OSC 10 ; ?
	qBg                    // OSC 11 ; ?
	qCursorColor           // OSC 12 ; ?
)

// queryTTL bounds how long a question waits for its answer; after it, a late
// answer is dropped as stale.
const queryTTL = 5 * time.Second

// arbiter tracks outstanding questions and decides who answers each. It
// is safe for concurrent use; time is passed in.
type arbiter struct {
	mu      sync.Mutex
	pending []pendingQuery // oldest first
}

type pendingQuery struct {
	kind  queryKind
	at    time.Time
	off   uint64 // the output offset just after the question
	model bool   // handed to the screen model to answer
}

// maxPending bounds the questions kept; past it, a flood of questions goes
// unanswered, as with a busy terminal.
const maxPending = 64

// asked records a question seen in the output at offset off. seen says
// whether a writable viewer attached now will see it and answer; when
// none will, asked reports that the model must answer it.
func (a *arbiter) asked(k queryKind, off uint64, now time.Time, seen bool) (byModel bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expireLocked(now)
	if len(a.pending) >= maxPending {
		return false
	}
	a.pending = append(a.pending, pendingQuery{kind: k, at: now, off: off, model: !seen})
	return !seen
}

// orphaned hands to the model the outstanding questions that no writable
// viewer left will answer (seen(off) is false for each): called when a
// writable viewer leaves. It returns them in the order they were asked.
func (a *arbiter) orphaned(now time.Time, seen func(off uint64) bool) []pendingQuery {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expireLocked(now)
	var out []pendingQuery
	for i := range a.pending {
		p := &a.pending[i]
		if !p.model && !seen(p.off) {
			p.model = true
			out = append(out, *p)
		}
	}
	return out
}

// answered reports whether an answer of kind k answers an outstanding
// question (which it then consumes), whoever sent it.
func (a *arbiter) answered(k queryKind, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expireLocked(now)
	for i, p := range a.pending {
		if p.kind == k {
			a.pending = append(a.pending[:i], a.pending[i+1:]...)
			return true
		}
	}
	return false
}

// outstanding reports whether a question of kind k waits for its answer.
func (a *arbiter) outstanding(k queryKind, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expireLocked(now)
	for _, p := range a.pending {
		if p.kind == k {
			return true
		}
	}
	return false
}

func (a *arbiter) expireLocked(now time.Time) {
	i := 0
	for i < len(a.pending) && now.Sub(a.pending[i].at) > queryTTL {
		i++
	}
	a.pending = a.pending[i:]
}

// queryScanner finds questions in output split into chunks at any byte.
type queryScanner struct {
	carry []byte // an unfinished sequence from the end of the last chunk
}

// maxQueryLen bounds the sequences the scanner looks at; longer ones are
// not questions.
const maxQueryLen = 16

// scan calls found for every question in p, with the offset just after it
// (base is the offset of p[0]).
func (s *queryScanner) scan(p []byte, base uint64, found func(k queryKind, end uint64)) {
	if len(s.carry) > 0 {
		// Complete the carried sequence with the start of p.
		n := min(len(p), maxQueryLen)
		joined := append(append([]byte{}, s.carry...), p[:n]...)
		carried := len(s.carry)
		s.carry = s.carry[:0]
		k, l, partial := parseQuery(joined)
		switch {
		case k != qNone && l > carried:
			found(k, base+uint64(l-carried))
		case partial && len(joined) < maxQueryLen && n == len(p):
			s.carry = append(s.carry, joined...)
			return
		}
	}
	for i := 0; i < len(p); {
		j := bytes.IndexByte(p[i:], 0x1b)
		if j < 0 {
			return
		}
		i += j
		k, l, partial := parseQuery(p[i:])
		if k != qNone {
			found(k, base+uint64(i+l))
			i += l
			continue
		}
		if partial && len(p)-i < maxQueryLen {
			s.carry = append(s.carry[:0], p[i:]...)
			return
		}
		i++
	}
}

// parseQuery reads a question at the start of b (which starts with ESC). It
// returns its kind and length, or partial when b ends before the sequence
// could be decided.
func parseQuery(b []byte) (k queryKind, n int, partial bool) {
	if len(b) < 2 {
		return qNone, 0, true
	}
	switch b[1] {
	case '[':
		i := 2
		prefix := byte(0)
		if i < len(b) && (b[i] == '>' || b[i] == '?') {
			prefix = b[i]
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' && i-start < 4 {
			i++
		}
		if i == len(b) {
			return qNone, 0, true
		}
		param := string(b[start:i])
		switch {
		case b[i] == 'c' && prefix == 0 && (param == "" || param == "0"):
			return qDA1, i + 1, false
		case b[i] == 'c' && prefix == '>' && (param == "" || param == "0"):
			return qDA2, i + 1, false
		case b[i] == 'n' && prefix == 0 && param == "5":
			return qStatus, i + 1, false
		case b[i] == 'n' && prefix == 0 && param == "6":
			return qCursor, i + 1, false
		}
		return qNone, 0, false
	case ']':
		// OSC 1x ; ? terminated by BEL or ST.
		want := []byte("\x1b]1")
		for i := 0; i < len(want) && i < len(b); i++ {
			if b[i] != want[i] {
				return qNone, 0, false
			}
		}
		if len(b) < 6 {
			return qNone, 0, true
		}
		kind := oscColorKind(b[3])
		if kind == qNone {
			return qNone, 0, false
		}
		if b[4] != ';' || b[5] != '?' {
			return qNone, 0, false
		}
		if len(b) < 7 {
			return qNone, 0, true
		}
		if b[6] == 0x07 {
			return kind, 7, false
		}
		if b[6] == 0x1b {
			if len(b) < 8 {
				return qNone, 0, true
			}
			if b[7] == '\\' {
				return kind, 8, false
			}
		}
		return qNone, 0, false
	}
	return qNone, 0, false
}

// asked handles a question the output asked, ending at offset end: a
// writable viewer that will see it answers it; with none, the host answers
// from the screen model. Deciding and recording happen under the host's
// lock, so a writable viewer leaving at the same moment (removeViewer)
// finds the question recorded and hands it over if nobody else will see it.
func (h *Host) asked(k queryKind, end uint64) {
	h.mu.Lock()
	byModel := h.arb.asked(k, end, time.Now(), h.writerSeesLocked(end))
	h.mu.Unlock()
	if byModel {
		h.modelAnswers(pendingQuery{kind: k, off: end})
	}
}

// writerSeesLocked reports whether a writable viewer attached now will see
// the question that ends at off in its output, and so answer it. A viewer
// whose first byte is not known yet (it is still being welcomed) does not
// count: if it answers too, the arbiter drops one of the two answers.
func (h *Host) writerSeesLocked(off uint64) bool {
	for v := range h.viewers {
		if !v.readOnly && v.fromKnown && v.liveFrom < off {
			return true
		}
	}
	return false
}

// modelAnswers queues a question for the model to answer. One worker
// answers in the order the questions were asked.
func (h *Host) modelAnswers(q pendingQuery) {
	h.answerOnce.Do(func() {
		h.answerQ = make(chan pendingQuery, maxPending)
		go func() {
			for q := range h.answerQ {
				h.answerFromModel(q.kind, q.off)
			}
		}()
	})
	select {
	case h.answerQ <- q:
	default: // a flood of questions: the rest go unanswered, as by a busy terminal
	}
}

// answerFromModel answers a question as a terminal would, from the screen
// model brought up to the question's offset.
func (h *Host) answerFromModel(k queryKind, end uint64) {
	var ans []byte
	switch k {
	case qDA1:
		ans = []byte("\x1b[?1;2c") // what xterm.js answers
	case qDA2:
		ans = []byte("\x1b[>0;276;0c")
	case qStatus:
		ans = []byte("\x1b[0n")
	case qFg, qCursorColor:
		ans = []byte("\x1b]1" + string('0'+byte(k-qFg)) + ";rgb:ffff/ffff/ffff\x1b\\")
	case qBg:
		ans = []byte("\x1b]11;rgb:0000/0000/0000\x1b\\")
	case qCursor:
		err := h.startModel().at(end, 2*time.Second, func(scr *screenT, _ uint64) {
			x, y := scr.CursorPosition()
			ans = fmt.Appendf(nil, "\x1b[%d;%dR", y+1, x+1)
		})
		if err != nil {
			return
		}
	}
	h.inputMu.Lock()
	defer h.inputMu.Unlock()
	if ans == nil || !h.arb.answered(k, time.Now()) {
		return // a writable viewer answered meanwhile
	}
	h.Input(ans)
}

// oscColorKind maps the digit after "OSC 1" to the color it is about:
// 10 foreground, 11 background, 12 cursor.
func oscColorKind(d byte) queryKind {
	switch d {
	case '0':
		return qFg
	case '1':
		return qBg
	case '2':
		return qCursorColor
	}
	return qNone
}
