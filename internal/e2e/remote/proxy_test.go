package remote

import (
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// stallProxy forwards TCP connections to a port, and can stall them all,
// new ones included, for a while: a network that carries nothing and
// says nothing (a laptop between networks), after which TCP carries on
// with what was held.
type stallProxy struct {
	l  net.Listener
	mu sync.Mutex
	// until is when the stall ends (zero: none); wake is closed when it does.
	until time.Time
	wake  chan struct{}
	wg    sync.WaitGroup
	// delay holds every chunk this long each way, on connections made
	// after it is set: a link far away (predict_test.go).
	delay time.Duration
}

// startProxy forwards 127.0.0.1:(its port) to 127.0.0.1:port until the
// test ends.
func startProxy(t *testing.T, port int) *stallProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{l: l}
	var conns []net.Conn
	var cmu sync.Mutex
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				c.Close()
				continue
			}
			cmu.Lock()
			conns = append(conns, c, up)
			cmu.Unlock()
			p.wg.Add(2)
			go p.pipe(up, c)
			go p.pipe(c, up)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
		p.mu.Lock()
		if p.wake != nil {
			close(p.wake)
			p.wake, p.until = nil, time.Time{}
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *stallProxy) port() int { return p.l.Addr().(*net.TCPAddr).Port }

// via is ssh command ssh of sshd s going through the proxy.
func (p *stallProxy) via(s *sshd, ssh string) string {
	return strings.Replace(ssh, "-p "+strconv.Itoa(s.port), "-p "+strconv.Itoa(p.port()), 1)
}

// stall holds every byte for d from now; the channel it returns is
// closed when the stall ends.
func (p *stallProxy) stall(d time.Duration) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	wake := make(chan struct{})
	p.until, p.wake = time.Now().Add(d), wake
	time.AfterFunc(d, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.wake == wake {
			close(wake)
			p.wake, p.until = nil, time.Time{}
		}
	})
	return wake
}

// hold waits while the proxy stalls.
func (p *stallProxy) hold() {
	p.mu.Lock()
	wake := p.wake
	p.mu.Unlock()
	if wake != nil {
		<-wake
	}
}

// pipe copies src to dst, each chunk held while the proxy stalls, and
// closes dst's writing half at src's end.
func (p *stallProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	p.mu.Lock()
	delay := p.delay
	p.mu.Unlock()
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
