package server

import (
	"fmt"
	"sync"
)

// DefaultMaxViewersPerToken is how many viewers one registry token (a
// share link, a user's token, and the browsers signed in with it) may
// have open at once on the browser listener when
// Config.MaxViewersPerToken is 0. Every viewer of a session is told of
// every other, so a session's cost grows with the square of its crowd:
// the cap keeps one leaked link from making that crowd.
const DefaultMaxViewersPerToken = 200

// ownerViewers is how many times a token's cap the owner's credential
// (its own browsers and tools) may have open: more than any one link,
// since the owner opens many tabs and tools, and still a bound, so a
// leaked owner credential cannot make an unbounded crowd either.
const ownerViewers = 5

// ownerKey counts the owner's viewers: no registry token has it.
const ownerKey = "\x00owner"

// viewerCap counts the open viewers of each registry token. The zero
// value is ready to use.
type viewerCap struct {
	mu   sync.Mutex // guards open
	open map[string]int
}

// take counts one more viewer of token id, unless it has limit already;
// release gives the place back (once).
func (c *viewerCap) take(id string, limit int) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		c.open = make(map[string]int)
	}
	if c.open[id] >= limit {
		if id == ownerKey {
			return nil, fmt.Errorf("the owner already has %d viewers open, the most it may have (%d times termkeep serve --max-viewers-per-token, TERMKEEP_MAX_VIEWERS_PER_TOKEN); close one", limit, ownerViewers)
		}
		return nil, fmt.Errorf("this link already has %d viewers open, the most one token may have (termkeep serve --max-viewers-per-token, TERMKEEP_MAX_VIEWERS_PER_TOKEN); close one, or ask for a link of your own", limit)
	}
	c.open[id]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.open[id]--; c.open[id] <= 0 {
				delete(c.open, id) // a crowd gone leaves nothing behind
			}
		})
	}, nil
}

func (s *Server) maxViewersPerToken() int {
	if n := s.cfg.MaxViewersPerToken; n > 0 {
		return n
	}
	return DefaultMaxViewersPerToken
}
