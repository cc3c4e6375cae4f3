package session

import (
	"context"
	"time"

	"termkeep/internal/screen"
	"termkeep/internal/termq"
)

// The host's side of terminal questions (package termq decides): it feeds
// the arbiter what the output asks and who comes and goes, under h.mu;
// writes the answers the arbiter forwards, under inputMu, so they reach the
// program in the order they were accepted, whichever viewers sent them; and
// answers from the screen model the questions handed to it, in one
// goroutine of its own.

// asked handles a question the output asked, ending at offset end.
// Deciding and recording happen under the host's lock, so a writable
// viewer leaving at the same moment (removeViewer) finds the question
// recorded and hands it over if nobody else will see it.
func (h *Host) asked(k termq.Kind, end uint64) {
	h.mu.Lock()
	who := h.questions.Asked(k, end, time.Now())
	h.mu.Unlock()
	if who == termq.Model {
		h.modelAnswers(termq.Question{Kind: k, End: end})
	}
}

// viewerInput writes a writable viewer's input frame p to the pty: its
// typing, and the answers in it that the arbiter forwards (termq.Filter).
func (h *Host) viewerInput(id int, p []byte, now time.Time) error {
	h.inputMu.Lock()
	defer h.inputMu.Unlock()
	data := termq.Filter(p, func(k termq.Kind) bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.questions.FromViewer(id, k, now)
	})
	if len(data) == 0 {
		return nil
	}
	return h.Input(data)
}

// skipQuestions hands to the model the questions viewer v will never see
// now that it skips the output in (had, at] (termq.Arbiter.Skip).
func (h *Host) skipQuestions(v *viewer, had, at uint64) {
	h.mu.Lock()
	qs := h.questions.Skip(v.id, had, at, time.Now())
	h.mu.Unlock()
	for _, q := range qs {
		h.modelAnswers(q)
	}
}

// modelAnswers queues a question for the model to answer. One worker
// answers in the order the questions were asked.
func (h *Host) modelAnswers(q termq.Question) {
	h.answerOnce.Do(func() {
		h.answerQ = make(chan termq.Question, termq.MaxPending)
		go func() {
			for q := range h.answerQ {
				h.answerFromModel(q)
			}
		}()
	})
	select {
	case h.answerQ <- q:
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
	h.inputMu.Lock()
	defer h.inputMu.Unlock()
	h.mu.Lock()
	forward := ans != nil && h.questions.FromModel(q.Kind, time.Now())
	h.mu.Unlock()
	if forward {
		h.Input(ans)
	}
}
