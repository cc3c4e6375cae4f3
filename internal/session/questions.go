package session

import (
	"context"
	"sync"
	"time"

	"termkeep/internal/screen"
	"termkeep/internal/termq"
)

// The host's side of terminal questions (package termq decides): it feeds
// the arbiter what the output asks and who comes and goes, under its own
// lock; writes the answers the arbiter forwards, under its input lock, so they reach the
// program in the order they were accepted, whichever viewers sent them; and
// answers from the screen model the questions handed to it, in one
// goroutine of its own.

// questionState is the host's state for terminal questions. Its arbiter has
// a lock of its own, taken under Host.mu where a viewer comes or goes, so
// that a question asked as a writable viewer leaves is recorded before it
// leaves or handed over when it does.
type questionState struct {
	mu  sync.Mutex    // guards arb
	arb termq.Arbiter // terminal questions awaiting their one answer
	// input orders viewers' input: an accepted answer is written before
	// the next is judged.
	input sync.Mutex
	scan  termq.Scanner // finds questions in the output; readHolder's goroutine only

	answerOnce sync.Once
	answerQ    chan termq.Question // questions the model answers, in order
}

// attach tells the arbiter of a viewer come (writable: it may answer).
func (q *questionState) attach(id int, writable bool) {
	q.mu.Lock()
	q.arb.Attach(id, writable)
	q.mu.Unlock()
}

// leave tells the arbiter of a viewer gone, and returns the questions
// that nobody left will answer.
func (q *questionState) leave(id int, now time.Time) []termq.Question {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.arb.Leave(id, now)
}

// live tells the arbiter a viewer sees every question asked after from.
func (q *questionState) live(id int, from uint64) {
	q.mu.Lock()
	q.arb.Live(id, from)
	q.mu.Unlock()
}

// asked handles a question the output asked, ending at offset end.
// Deciding and recording happen under the arbiter's lock, so a writable
// viewer leaving at the same moment (removeViewer) finds the question
// recorded and hands it over if nobody else will see it.
func (h *Host) asked(k termq.Kind, end uint64) {
	h.q.mu.Lock()
	who := h.q.arb.Asked(k, end, h.now())
	h.q.mu.Unlock()
	if who == termq.Model {
		h.modelAnswers(termq.Question{Kind: k, End: end})
	}
}

// viewerInput writes a writable viewer's input frame p to the pty: its
// typing, and the answers in it that the arbiter forwards (termq.Filter).
func (h *Host) viewerInput(id int, p []byte, now time.Time) error {
	h.q.input.Lock()
	defer h.q.input.Unlock()
	data := termq.Filter(p, func(k termq.Kind) bool {
		h.q.mu.Lock()
		defer h.q.mu.Unlock()
		return h.q.arb.FromViewer(id, k, now)
	})
	if len(data) == 0 {
		return nil
	}
	return h.Input(data)
}

// skipQuestions hands to the model the questions viewer v will never see
// now that it skips the output in (had, at] (termq.Arbiter.Skip).
func (v *viewer) skipQuestions(had, at uint64) {
	h := v.h
	h.q.mu.Lock()
	qs := h.q.arb.Skip(v.id, had, at, h.now())
	h.q.mu.Unlock()
	for _, q := range qs {
		h.modelAnswers(q)
	}
}

// modelAnswers queues a question for the model to answer. One worker
// answers in the order the questions were asked.
func (h *Host) modelAnswers(q termq.Question) {
	h.q.answerOnce.Do(func() {
		h.q.answerQ = make(chan termq.Question, termq.MaxPending)
		go func() {
			for q := range h.q.answerQ {
				h.answerFromModel(q)
			}
		}()
	})
	select {
	case h.q.answerQ <- q:
	default: // a flood of questions: the rest go unanswered, as by a busy terminal
	}
}

// answerFromModel answers a question as a terminal would, from the screen
// model brought up to the question's offset, unless a viewer answered it
// meanwhile.
func (h *Host) answerFromModel(q termq.Question) {
	var ans []byte
	if q.Kind == termq.Cursor {
		// A late answer is no answer: a terminal that has not replied
		// within 2 s is taken for one that never will.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := h.startModel().at(ctx, q.End, func(scr *screen.Screen, _ uint64) {
			x, y := scr.CursorPosition()
			ans = termq.Reply(q.Kind, x, y)
		})
		cancel()
		if err != nil {
			return
		}
	} else {
		ans = termq.Reply(q.Kind, 0, 0)
	}
	h.q.input.Lock()
	defer h.q.input.Unlock()
	h.q.mu.Lock()
	forward := ans != nil && h.q.arb.FromModel(q.Kind, h.now())
	h.q.mu.Unlock()
	if forward {
		h.Input(ans)
	}
}
