package store

import (
	"sync"
	"time"
)

// tokenCache keeps the rows TokenBySecret found, by the secret's hash, so
// that a crowd of one share link's viewers is let in without a registry
// read each (reads and writes share the registry's one connection, so
// those reads would delay the owner's writes). It follows the session
// cache's rule: every write of token rows goes through write, which
// empties the cache before it starts and after it ends, and nothing is
// cached or answered while one is under way. A caller whose revoke has
// returned never meets the token as it was.
type tokenCache struct {
	mu      sync.Mutex
	writing int    // writes of token rows under way
	epoch   uint64 // changes at each write's start and end
	byHash  map[string]Token
}

func newTokenCache() *tokenCache { return &tokenCache{byHash: map[string]Token{}} }

// write runs fn, a write of token rows, with the cache emptied and closed
// around it.
func (c *tokenCache) write(fn func() error) error {
	c.reset(+1)
	defer c.reset(-1)
	return fn()
}

func (c *tokenCache) reset(d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writing += d
	c.epoch++
	clear(c.byHash)
}

// lookup returns the cached token of hash, and the epoch to store a
// miss's answer under.
func (c *tokenCache) lookup(hash string) (Token, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writing > 0 {
		return Token{}, false, 0
	}
	t, ok := c.byHash[hash]
	return t.clone(), ok, c.epoch
}

// store records t, read for hash at epoch, unless a write has started
// since.
func (c *tokenCache) store(hash string, t Token, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writing == 0 && c.epoch == epoch {
		c.byHash[hash] = t.clone()
	}
}

// clone copies t's times, so a caller cannot change the cached row.
func (t Token) clone() Token {
	for _, p := range []**time.Time{&t.ExpiresAt, &t.LastUsedAt, &t.RevokedAt} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return t
}
