package session

import (
	"sync"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/shellmark"
)

// The shell's state (package shellmark): the host feeds its tracker every
// byte the holder sends, on readHolder's goroutine, and a new server
// rebuilds it from the log's tail before reading live output, so what a
// session's shell is doing survives a restart of the server.

// shellTail bounds the log read for the tracker when the host starts: the
// newest window first, then wider ones while it holds no mark at all, or
// the end of a command whose start it does not hold (a command that has
// printed much since its start).
var shellTail = []uint64{256 << 10, 4 << 20}

// shellState is the host's tracker and how far it has read.
type shellState struct {
	mu  sync.Mutex // guards the fields below
	t   *shellmark.Tracker
	end uint64 // offset after the last byte fed
}

// feed gives the tracker the output at off that arrived at now, skipping
// what it has had (a holder's resend after a reconnect) and forgetting a
// half-read mark across a jump.
func (s *shellState) feed(off uint64, now time.Time, p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.t == nil {
		s.t = shellmark.NewTracker()
	}
	switch {
	case off+uint64(len(p)) <= s.end:
		return
	case off < s.end:
		p, off = p[s.end-off:], s.end
	case off > s.end:
		s.t.Reset()
	}
	s.t.Write(off, now, p)
	s.end = off + uint64(len(p))
}

// load rebuilds the tracker from the log's tail, up to end, once: at the
// host's first connection. A tracker already fed is kept.
func (s *shellState) load(l *outlog.Log, end uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.t != nil {
		return
	}
	first := l.First()
	for _, n := range shellTail {
		lo := first
		if end > first+n {
			lo = end - n
		}
		t, at := shellmark.NewTracker(), lo
		err := l.Chunks(lo, end, func(c outlog.Chunk) error {
			switch {
			case c.Kind == outlog.ChunkGap:
				t.Reset()
				at = c.End
			case c.Kind == outlog.ChunkData && !c.Mark:
				t.Write(c.Offset, c.Time, c.Data)
				at = c.Offset + uint64(len(c.Data))
			case c.Kind == outlog.ChunkData:
				at = c.Offset + uint64(len(c.Data))
			}
			return nil
		})
		s.t, s.end = t, max(at, end)
		if st := t.Status(); err != nil || lo == first || st.Marks > 0 && (st.Last == nil || st.Last.HasOutput) {
			return
		}
	}
}

// Shell returns what the session's shell is doing, as its OSC 133 marks
// tell (Unknown for a session without shell integration).
func (h *Host) Shell() shellmark.Status {
	h.shell.mu.Lock()
	defer h.shell.mu.Unlock()
	if h.shell.t == nil {
		return shellmark.Status{State: shellmark.Unknown}
	}
	return h.shell.t.Status()
}
