package store

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
)

// sessionCache keeps the rows Session and Resolve read, so that a request
// naming a session (every attach, most API calls) answers without SQLite:
// after an idle spell one lookup took 0.4–0.9 ms, a fresh attach's largest
// server-side step (docs/performance-ab.md).
//
// While the server runs it is the registry's only writer (doctor only reads
// then), and every write of a session row goes through write: the cache is
// emptied before it starts and after it ends, and nothing is cached or
// answered while one is under way, so a caller whose write has returned
// never reads what was there before it.
type sessionCache struct {
	mu      sync.Mutex
	writing int    // writes of session rows under way
	epoch   uint64 // changes at each write's start and end
	byID    map[string]Session
	// byRef maps a name to the id of the session that has it, from a
	// Resolve that found no session with that id (an id wins over a name).
	byRef map[string]string
	// check is set in tests: every answer from the cache is compared with
	// the registry's, so a write that bypasses write fails loudly.
	check bool
}

func newSessionCache() *sessionCache {
	return &sessionCache{byID: map[string]Session{}, byRef: map[string]string{}, check: testing.Testing()}
}

// write runs fn, a write of session rows, with the cache emptied and
// closed around it.
func (c *sessionCache) write(fn func() error) error {
	c.reset(+1)
	defer c.reset(-1)
	return fn()
}

func (c *sessionCache) reset(d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writing += d
	c.epoch++
	clear(c.byID)
	clear(c.byRef)
}

// lookup returns the cached session that ref (an id, or a name when byName)
// resolves to, and the epoch to store a miss's answer under.
func (c *sessionCache) lookup(ref string, byName bool) (Session, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writing > 0 {
		return Session{}, false, 0
	}
	sess, ok := c.byID[ref]
	if !ok && byName {
		if id, named := c.byRef[ref]; named {
			sess, ok = c.byID[id]
		}
	}
	return sess.clone(), ok, c.epoch
}

// store records sess, read for ref at epoch, unless a write has started
// since.
func (c *sessionCache) store(ref string, sess Session, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writing > 0 || c.epoch != epoch {
		return
	}
	c.byID[sess.ID] = sess.clone()
	if ref != sess.ID {
		c.byRef[ref] = sess.ID
	}
}

// verify panics when a cached answer for ref differs from the registry's,
// read after it with no write in between.
func (c *sessionCache) verify(ref string, cached Session, epoch uint64, read func() (Session, error)) {
	fresh, err := read()
	if err != nil && !errors.Is(err, ErrNotFound) {
		return // the caller's context ended, or the file failed: no answer to compare
	}
	c.mu.Lock()
	unchanged := c.writing == 0 && c.epoch == epoch
	c.mu.Unlock()
	if unchanged && (err != nil || !reflect.DeepEqual(fresh, cached)) {
		panic(fmt.Sprintf("store: the session cache answered %q with %+v; the registry has %+v (%v): a write of session rows bypassed sessionCache.write", ref, cached, fresh, err))
	}
}

// clone is a copy of s that shares nothing with it.
func (s Session) clone() Session {
	s.Command = slices.Clone(s.Command)
	if s.ExitCode != nil {
		v := *s.ExitCode
		s.ExitCode = &v
	}
	if s.EndedAt != nil {
		v := *s.EndedAt
		s.EndedAt = &v
	}
	return s
}

// TrustCache turns off what tests get by default: the comparison of every
// answer from the session cache with the registry's. A test that measures
// the registry's load as it is outside tests calls it.
func (s *Store) TrustCache() { s.sessions.check = false }
