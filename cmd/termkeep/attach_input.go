package main

import (
	"bytes"
	"io"
	"sync"
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
type inputPath struct {
	ch      chan []byte
	mu      sync.Mutex
	s       inputStream // the stream while attached
	waiting int         // keystrokes on ch or held
	held    [][]byte    // taken from ch, refused by a broken stream
}

// inputStream is where keystrokes go: a *client.Stream.
type inputStream interface{ Input([]byte) error }

// connected sets the stream keystrokes go to (nil while reconnecting) and
// sends it what an earlier stream refused.
func (p *inputPath) connected(s inputStream) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.s = s
	for s != nil && len(p.held) > 0 && s.Input(p.held[0]) == nil {
		p.held = p.held[1:]
		p.waiting--
	}
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
	p.mu.Unlock()
	p.ch <- append([]byte(nil), data...)
}

// queued sends a queued keystroke on s, the attach loop's stream, or holds
// it for the next one when s is broken or earlier ones are held.
func (p *inputPath) queued(s inputStream, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.held) == 0 && s.Input(data) == nil {
		p.waiting--
		return
	}
	p.held = append(p.held, data)
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
				p.send(data[:i])
			}
			d.detach()
			return true
		}
	}
	if len(data) > 0 {
		p.send(data)
	}
	return false
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
