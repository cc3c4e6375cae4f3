package termq

import (
	"fmt"
	"math"
	"time"
)

// TTL bounds how long a question waits for its answer; after it, a late
// answer is dropped as stale.
const TTL = 5 * time.Second

// MaxPending bounds the questions that wait for an answer; past it, a
// flood of questions goes unanswered, as with a busy terminal.
const MaxPending = 64

// Question is a question the output asked and that waits for its answer.
type Question struct {
	Kind Kind
	End  uint64    // the output offset just after the question
	At   time.Time // when it was asked
	// model: handed to the screen model to answer (Arbiter.Asked said
	// Model, or Arbiter.Leave returned it).
	model bool
}

func (q Question) String() string { return fmt.Sprintf("%s@%d", q.Kind, q.End) }

// Who says who is to answer a question.
type Who uint8

const (
	// Nobody: the question was not recorded (MaxPending wait already) and
	// goes unanswered.
	Nobody Who = iota
	// Viewer: a writable viewer sees the question and answers it.
	Viewer
	// Model: no writable viewer will see it; the caller answers it from
	// its screen model (Reply), and offers that answer to FromModel.
	Model
)

func (w Who) String() string {
	return [...]string{Nobody: "nobody", Viewer: "viewer", Model: "model"}[w]
}

// Arbiter keeps the questions the session's output has asked and not yet
// had answered, and the viewers that may answer them. The first answer to
// an outstanding question passes, whoever sends it (a writable viewer or
// the model); every other one is dropped.
//
// An Arbiter is a single-threaded state machine: it does no I/O, and time
// is passed in. It is not safe for concurrent use; its owner serialises
// calls (the session host holds its lock around each). The zero value is
// ready to use.
type Arbiter struct {
	pending []Question // oldest first
	viewers map[int]viewerState
}

type viewerState struct {
	writable bool
	live     bool   // from is known
	from     uint64 // the offset of the first output byte it is sent
}

// Attach records a viewer, known by id, that may answer (writable) or not.
// Until Live says where its output starts, it answers nothing it is asked:
// if it answers anyway, its answer is one of two and one is dropped.
func (a *Arbiter) Attach(id int, writable bool) {
	if a.viewers == nil {
		a.viewers = make(map[int]viewerState)
	}
	a.viewers[id] = viewerState{writable: writable}
}

// Live records that viewer id is sent the output from offset from on: it
// sees, and if writable answers, every question that ends after from.
func (a *Arbiter) Live(id int, from uint64) {
	if v, ok := a.viewers[id]; ok {
		v.live, v.from = true, from
		a.viewers[id] = v
	}
}

// Leave forgets viewer id. When it was writable, the questions it was to
// answer and that no writable viewer left will see are handed to the
// model: Leave returns them in the order they were asked, and the caller
// answers each (Reply, then FromModel).
func (a *Arbiter) Leave(id int, now time.Time) []Question {
	v, ok := a.viewers[id]
	delete(a.viewers, id)
	if !ok || !v.writable {
		return nil
	}
	return a.handOver(0, math.MaxUint64, now)
}

// Skip records that viewer id, sent the output below had, skips to at
// (it fell behind and is sent a snapshot): it will never see the questions
// that end in (had, at]. Those that no other writable viewer will see are
// handed to the model, as at Leave: Skip returns them in the order they
// were asked, and the caller answers each.
func (a *Arbiter) Skip(id int, had, at uint64, now time.Time) []Question {
	v, ok := a.viewers[id]
	if !ok || !v.live {
		return nil
	}
	v.from = max(v.from, at)
	a.viewers[id] = v
	if !v.writable {
		return nil
	}
	return a.handOver(had, at, now)
}

// handOver hands to the model the outstanding questions that end in
// (after, upTo] and that no writable viewer will see, and returns them in
// the order they were asked.
func (a *Arbiter) handOver(after, upTo uint64, now time.Time) []Question {
	a.expire(now)
	var out []Question
	for i := range a.pending {
		p := &a.pending[i]
		if !p.model && p.End > after && p.End <= upTo && !a.seen(p.End) {
			p.model = true
			out = append(out, *p)
		}
	}
	return out
}

// Asked records a question of kind k that the output asked, ending at
// offset end, and says who is to answer it.
func (a *Arbiter) Asked(k Kind, end uint64, now time.Time) Who {
	a.expire(now)
	if len(a.pending) >= MaxPending {
		return Nobody
	}
	seen := a.seen(end)
	a.pending = append(a.pending, Question{Kind: k, End: end, At: now, model: !seen})
	if seen {
		return Viewer
	}
	return Model
}

// FromViewer reports whether an answer of kind k from viewer id is to be
// forwarded: the viewer is writable, and the answer is the first to an
// outstanding question of that kind (which it then consumes). A read-only
// or unknown viewer's answer is never forwarded and consumes nothing. It
// suits Filter's take.
func (a *Arbiter) FromViewer(id int, k Kind, now time.Time) bool {
	if !a.viewers[id].writable {
		return false
	}
	return a.take(k, now)
}

// FromModel reports whether the model's answer of kind k is to be
// forwarded: no viewer has answered the question meanwhile (the answer
// then consumes it).
func (a *Arbiter) FromModel(k Kind, now time.Time) bool { return a.take(k, now) }

// Outstanding reports whether a question of kind k waits for its answer.
func (a *Arbiter) Outstanding(k Kind, now time.Time) bool {
	a.expire(now)
	for _, p := range a.pending {
		if p.Kind == k {
			return true
		}
	}
	return false
}

func (a *Arbiter) take(k Kind, now time.Time) bool {
	a.expire(now)
	for i, p := range a.pending {
		if p.Kind == k {
			a.pending = append(a.pending[:i], a.pending[i+1:]...)
			return true
		}
	}
	return false
}

// seen reports whether a writable viewer attached now will see the
// question that ends at end in its output, and so answer it.
func (a *Arbiter) seen(end uint64) bool {
	for _, v := range a.viewers {
		if v.writable && v.live && v.from < end {
			return true
		}
	}
	return false
}

func (a *Arbiter) expire(now time.Time) {
	i := 0
	for i < len(a.pending) && now.Sub(a.pending[i].At) > TTL {
		i++
	}
	a.pending = a.pending[i:]
}

// Reply is the answer a terminal gives to a question of kind k, as the
// caller's screen model answers for one: what xterm.js answers, a white
// foreground and cursor, a black background, and for the cursor position
// the 0-based column x and row y given (the caller's model at the
// question's offset). It returns nil for None.
func Reply(k Kind, x, y int) []byte {
	switch k {
	case DA1:
		return []byte("\x1b[?1;2c")
	case DA2:
		return []byte("\x1b[>0;276;0c")
	case Status:
		return []byte("\x1b[0n")
	case Cursor:
		return fmt.Appendf(nil, "\x1b[%d;%dR", y+1, x+1)
	case Foreground, CursorColor:
		return []byte("\x1b]1" + string('0'+byte(k-Foreground)) + ";rgb:ffff/ffff/ffff\x1b\\")
	case Background:
		return []byte("\x1b]11;rgb:0000/0000/0000\x1b\\")
	}
	return nil
}
