package replay

import "sync"

// Indexes keeps the Index of the sessions whose timelines were asked for
// most recently, at most a number of them, so that memory does not grow
// with every session ever replayed. It is safe for concurrent use.
type Indexes struct {
	max int

	mu   sync.Mutex // guards the fields below
	m    map[string]*indexEntry
	tick uint64
}

type indexEntry struct {
	ix   *Index
	used uint64 // the tick of its last Get
}

// NewIndexes returns a cache of at most n indexes (at least 1).
func NewIndexes(n int) *Indexes {
	return &Indexes{max: max(n, 1), m: make(map[string]*indexEntry)}
}

// Get returns the index of session id, making it (and forgetting the
// least recently used one beyond the bound) when there is none.
func (x *Indexes) Get(id string) *Index {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.tick++
	e := x.m[id]
	if e == nil {
		if len(x.m) >= x.max {
			x.evictLocked()
		}
		e = &indexEntry{ix: &Index{}}
		x.m[id] = e
	}
	e.used = x.tick
	return e.ix
}

// Forget drops session id's index (the session was removed).
func (x *Indexes) Forget(id string) {
	x.mu.Lock()
	delete(x.m, id)
	x.mu.Unlock()
}

func (x *Indexes) evictLocked() {
	oldest, at := "", uint64(0)
	for id, e := range x.m {
		if oldest == "" || e.used < at {
			oldest, at = id, e.used
		}
	}
	delete(x.m, oldest)
}
