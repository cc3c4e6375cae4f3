package attach

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// inputPath carries keystrokes to the server. While attached, with
// nothing queued, the goroutine reading the terminal writes them to the
// stream itself: a hand-off to another goroutine costs a keystroke a
// thread's wake-up (tens of microseconds on a virtual machine). Otherwise
// they queue on ch for the attach loop, which sends them once connected;
// waiting counts those not yet sent, so a direct write never overtakes
// them. A keystroke the stream refuses (the server died before the loop
// noticed) is held and sent first on the next connection: it never reached
// a server, so sending it again loses nothing and doubles nothing.
//
// Keystrokes wait for a connection only a moment (keyHold): after a
// longer outage they are dropped, and counted for a notice, since what
// they were typed into may be gone (a prompt answered by a timeout, a
// program that ended) and they would land in whatever runs now.
type inputPath struct {
	ch      chan key
	now     func() time.Time // the clock; time.Now when nil
	mu      sync.Mutex
	s       inputStream // the stream while attached
	waiting int         // keystrokes on ch or held
	held    []key       // taken from ch, refused by a broken stream
	// lostAt is when the last connection was lost (zero while attached);
	// keys typed before dropBefore were typed before an outage longer
	// than keyHold, and are dropped; dropped counts their bytes.
	lostAt, dropBefore time.Time
	dropped            int
	// typed, when set, sees each chunk typed before it is sent (predictive
	// echo); it is called from the goroutine that read the chunk.
	typed func([]byte)
}

// key is a chunk typed on the terminal, and when.
type key struct {
	b  []byte
	at time.Time
}

// keyHold bounds how long a keystroke waits for a connection. A server
// restarting (an upgrade, a crash and the autostart) is back within a
// few hundred milliseconds, and keys typed meanwhile belong where they
// were typed; by a second, a user looking at a terminal that does not
// answer stops typing into it, and what runs may have changed.
const keyHold = time.Second

func newInputPath(now func() time.Time) *inputPath {
	return &inputPath{ch: make(chan key, 16), now: now}
}

func (p *inputPath) clock() time.Time {
	if p.now == nil {
		return time.Now()
	}
	return p.now()
}

// inputStream is where keystrokes go: a *client.Stream.
type inputStream interface{ Input([]byte) error }

// connected sets the stream keystrokes go to (nil while reconnecting) and
// sends it what an earlier stream refused, unless the outage was too long
// for them.
func (p *inputPath) connected(s inputStream) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock()
	switch {
	case s == nil && p.lostAt.IsZero():
		p.lostAt = now
	case s != nil && !p.lostAt.IsZero():
		if now.Sub(p.lostAt) > keyHold {
			p.dropBefore = now
		}
		p.lostAt = time.Time{}
	}
	p.s = s
	for s != nil && len(p.held) > 0 && (p.stale(p.held[0]) || s.Input(p.held[0].b) == nil) {
		p.held = p.held[1:]
		p.waiting--
	}
}

// stale reports whether k was typed before an outage too long for it,
// and counts it as dropped if so.
func (p *inputPath) stale(k key) bool {
	if k.at.Before(p.dropBefore) {
		p.dropped += len(k.b)
		return true
	}
	return false
}

// takeDropped returns the bytes dropped since it was last asked.
func (p *inputPath) takeDropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.dropped
	p.dropped = 0
	return n
}

// send writes data to the stream when it can go straight there, else
// queues a copy of it (waiting while the queue is full).
func (p *inputPath) send(data []byte) {
	p.mu.Lock()
	if p.s != nil && p.waiting == 0 && p.s.Input(data) == nil {
		p.mu.Unlock()
		return
	}
	p.waiting++
	at := p.clock()
	p.mu.Unlock()
	p.ch <- key{b: append([]byte(nil), data...), at: at}
}

// queued sends a queued keystroke on s, the attach loop's stream, or holds
// it for the next one when s is broken or earlier ones are held; one typed
// before a long outage is dropped.
func (p *inputPath) queued(s inputStream, k key) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stale(k) || len(p.held) == 0 && s.Input(k.b) == nil {
		p.waiting--
		return
	}
	p.held = append(p.held, k)
}

// discard forgets a keystroke taken from ch that is sent nowhere.
func (p *inputPath) discard() {
	p.mu.Lock()
	p.waiting--
	p.mu.Unlock()
}

// detacher closes ch once, whichever path (attach's reader, a lane's
// hand-back) finds the detach key first.
type detacher struct {
	once sync.Once
	ch   chan struct{}
}

func newDetacher() *detacher { return &detacher{ch: make(chan struct{})} }

func (d *detacher) detach() { d.once.Do(func() { close(d.ch) }) }

// take handles one chunk typed on the terminal, read by attach or handed
// back by a lane: up to the detach key it goes to the session; the key
// detaches (it reports that), and what follows it is dropped.
func (p *inputPath) take(data []byte, detachKey int, d *detacher) bool {
	if detachKey >= 0 {
		if i := bytes.IndexByte(data, byte(detachKey)); i >= 0 {
			if i > 0 {
				p.see(data[:i])
				p.send(data[:i])
			}
			d.detach()
			return true
		}
	}
	if len(data) > 0 {
		p.see(data)
		p.send(data)
	}
	return false
}

func (p *inputPath) see(data []byte) {
	if p.typed != nil {
		p.typed(data)
	}
}

// readInput copies the local terminal to the session until it ends or the
// detach key is pressed. It reads with a plain Read: no buffering decoder
// stands in front of terminal bytes. A reader that can be paused
// (rawTerm) is told when it reads no more.
func readInput(in io.Reader, detachKey int, typed *inputPath, d *detacher) {
	if r, ok := in.(interface{ done() }); ok {
		defer r.done()
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 && typed.take(buf[:n], detachKey, d) {
			return
		}
		if err != nil {
			close(typed.ch)
			return
		}
	}
}
