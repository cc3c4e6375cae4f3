// Package slowlink is a TCP proxy on 127.0.0.1 that makes a link far away
// or silent, for tests and benchmarks: it can hold every chunk a fixed
// delay each way (a link with a long round trip), and stall every
// connection, new ones included, for a while (a network that carries
// nothing and says nothing: no reset), after which TCP carries on with
// what was held. Bytes are never lost, reordered or cut short by it.
package slowlink

import (
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// Proxy forwards the connections it accepts to a port on 127.0.0.1.
type Proxy struct {
	l  net.Listener
	wg sync.WaitGroup // the accept loop and every copier

	mu sync.Mutex // guards the fields below
	// wake is closed when the current stall ends (nil: none).
	wake chan struct{}
	// delay holds every chunk this long each way, on connections the
	// proxy accepts after it is set.
	delay time.Duration
	conns []net.Conn
}

// Start forwards a port of its own (Port) to 127.0.0.1:port until Close.
func Start(port int) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{l: l}
	p.wg.Add(1)
	go p.accept(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	return p, nil
}

func (p *Proxy) accept(to string) {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", to)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		delay := p.delay
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, c, delay)
		go p.pipe(c, up, delay)
	}
}

// Port is the port it listens on.
func (p *Proxy) Port() int { return p.l.Addr().(*net.TCPAddr).Port }

// SetDelay holds every chunk d each way on the connections the proxy
// accepts from now: one dialled just before may not have been accepted yet.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Stall holds every byte for d from now; the channel it returns is closed
// when the stall ends.
func (p *Proxy) Stall(d time.Duration) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	wake := make(chan struct{})
	p.wake = wake
	time.AfterFunc(d, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.wake == wake {
			close(wake)
			p.wake = nil
		}
	})
	return wake
}

// Close stops listening, closes every connection, ends a stall and waits
// for its goroutines.
func (p *Proxy) Close() {
	p.l.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	if p.wake != nil {
		close(p.wake)
		p.wake = nil
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// hold waits while the proxy stalls.
func (p *Proxy) hold() {
	p.mu.Lock()
	wake := p.wake
	p.mu.Unlock()
	if wake != nil {
		<-wake
	}
}

// pipe copies src to dst, each chunk held while the proxy stalls (and
// delay after it was read), and closes dst's writing half at src's end.
func (p *Proxy) pipe(dst, src net.Conn, delay time.Duration) {
	defer p.wg.Done()
	if delay > 0 {
		p.delayed(dst, src, delay)
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.hold()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err == io.EOF {
			dst.(*net.TCPConn).CloseWrite()
			return
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// delayed copies src to dst, each chunk written delay after it was read,
// in order; dst's writing half is closed at src's end.
func (p *Proxy) delayed(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	ch := make(chan chunk, 1024)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				ch <- chunk{buf[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.at.Add(delay)))
		p.hold()
		if _, err := dst.Write(c.b); err != nil {
			src.Close()
			for range ch {
			}
			return
		}
	}
	dst.(*net.TCPConn).CloseWrite()
}
