package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How long the browser listener waits for a client. A WebSocket lives for
// hours: once upgraded it has no deadline of the HTTP server's, and the
// session host's pings decide when its browser is gone (hijackRaw clears
// the deadlines).
type listenerTimeouts struct {
	header time.Duration // a request's headers, from accept (and the TLS handshake)
	body   time.Duration // the body of a request, from its headers on
	idle   time.Duration // between requests of a kept-alive connection
	// write bounds each write of an answer: a stream (events, grep,
	// replay) may last as long as it likes, as long as its reader reads.
	write time.Duration
	drain time.Duration // the unread body of a refused request, before the close
}

var defaultTimeouts = listenerTimeouts{
	header: 10 * time.Second, body: 30 * time.Second, idle: 2 * time.Minute,
	write: time.Minute, drain: time.Second,
}

// gateListener is the browser listener's accept loop: it holds each
// connection to the connGate's decisions and keeps fdReserve descriptors
// free for the rest of the server, whatever browsers and their viewers
// take. Accept is called by one goroutine (http.Server.Serve). Its clock
// is the system's: descriptors and sockets live in real time.
type gateListener struct {
	net.Listener
	log     *slog.Logger
	metrics *metrics

	mu    sync.Mutex // guards gate and conns
	gate  *connGate
	conns map[uint64]*gatedConn // the unauthenticated ones, to evict

	held atomic.Int64 // connections of this listener open now
	// Descriptors counted in /proc at procAt (procOpen, with held at
	// heldAtProc then), and the limit then: a count is a directory read,
	// so it is made at most every fdRecount; between counts what this
	// listener opened and closed is added.
	procAt               time.Time
	procOpen, heldAtProc int64
	limit                uint64

	// refused counts the connections closed at once for want of a
	// descriptor; the warnings about refusals and evictions are made at
	// most once a minute each.
	refused                 atomic.Int64
	warnedAt, evictWarnedAt time.Time
}

// fdRecount is how often the listener counts the process's descriptors
// while it accepts: 1,000 of them take about 0.5 ms to count.
const fdRecount = 100 * time.Millisecond

func newGateListener(ln net.Listener, log *slog.Logger, m *metrics) *gateListener {
	total, per := unauthCaps(fileLimit())
	return &gateListener{Listener: ln, log: log, metrics: m, gate: newConnGate(total, per), conns: map[uint64]*gatedConn{}}
}

func (l *gateListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		now := time.Now()
		room := l.room(now)
		l.mu.Lock()
		id, keep, evict := l.gate.admit(sourceOf(c.RemoteAddr()), now, room)
		victims := make([]*gatedConn, 0, len(evict))
		for _, e := range evict {
			if v := l.conns[e]; v != nil {
				victims = append(victims, v)
				delete(l.conns, e)
			}
		}
		var gc *gatedConn
		if keep {
			gc = &gatedConn{Conn: c, l: l, id: id}
			l.conns[id] = gc
			l.held.Add(1)
		}
		total, per := l.gate.maxUnauth, l.gate.perSource
		l.mu.Unlock()
		for _, v := range victims {
			v.Close()
		}
		l.metrics.droppedConns("evicted", len(victims))
		if len(victims) > 0 && now.Sub(l.evictWarnedAt) > time.Minute {
			l.evictWarnedAt = now
			l.log.Warn("many browser connections without a valid token: the oldest are closed for newer ones "+
				"(termkeep_browser_connections_dropped_total counts them)", "cap", total, "cap_per_source", per,
				"source", sourceOf(c.RemoteAddr()))
		}
		if gc != nil {
			return gc, nil
		}
		// No descriptor to spare and no unauthenticated connection to
		// take one from: the client sees its connection closed at once
		// rather than waiting in the kernel's queue.
		c.Close()
		l.refused.Add(1)
		l.metrics.droppedConns("refused", 1)
		if now.Sub(l.warnedAt) > time.Minute {
			l.warnedAt = now
			l.log.Warn("refusing browser connections: the server keeps its last file descriptors for the CLI and the sessions; "+
				"raise its file limit (ulimit -n, LimitNOFILE=) if browsers need more", "limit", l.limit, "reserve", fdReserve(l.limit),
				"browser_connections", l.held.Load(), "refused", l.refused.Load())
		}
	}
}

// room reports whether the process may open one more descriptor for a
// browser and still keep its reserve. Where descriptors cannot be counted
// (no /proc) or are unlimited, there is always room.
func (l *gateListener) room(now time.Time) bool {
	held := l.held.Load()
	if l.procAt.IsZero() || now.Sub(l.procAt) >= fdRecount || now.Before(l.procAt) {
		l.limit = fileLimit()
		l.mu.Lock()
		l.gate.setCaps(unauthCaps(l.limit))
		l.mu.Unlock()
		n, err := openFiles()
		if err != nil {
			// Not even a descriptor to read the count with: no room.
			// Without /proc or /dev/fd, nothing to go by.
			return !outOfFiles(err)
		}
		l.procAt, l.procOpen, l.heldAtProc = now, int64(n), held
	}
	if l.limit == 0 {
		return true
	}
	// Between counts the estimate may be a descriptor or two short (the
	// connection just accepted, another part of the server's): the
	// reserve is far larger.
	open := uint64(max(l.procOpen+held-l.heldAtProc, 0))
	return open+fdReserve(l.limit) <= l.limit
}

// authenticated takes c out of the gate: a request on it passed the guard.
func (l *gateListener) authenticated(c *gatedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gate.authenticated(c.id)
	delete(l.conns, c.id)
}

func (l *gateListener) release(c *gatedConn) {
	l.mu.Lock()
	l.gate.closed(c.id)
	delete(l.conns, c.id)
	l.mu.Unlock()
	l.held.Add(-1)
}

// fileLimit is the process's soft RLIMIT_NOFILE, 0 when unlimited or
// unknown. (Go raises the soft limit to the hard one at start.)
func fileLimit() uint64 {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Cur == unix.RLIM_INFINITY {
		return 0
	}
	return lim.Cur
}

// gatedConn is a browser connection the gateListener counts.
type gatedConn struct {
	net.Conn
	l    *gateListener
	id   uint64
	once sync.Once
}

func (c *gatedConn) Close() error {
	c.once.Do(func() { c.l.release(c) })
	return c.Conn.Close()
}

// SyscallConn gives the descriptor to rawio (hijackRaw), as the TCP
// connection would.
func (c *gatedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, syscall.EINVAL
}

type gatedConnKey struct{}

// connContext is the http.Server's ConnContext: it lets the guard's
// requests find their connection.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if gc, ok := c.(*gatedConn); ok {
		return context.WithValue(ctx, gatedConnKey{}, gc)
	}
	return ctx
}

// withDeadlines is the outermost handler of the browser listener. Every
// answer closes its connection unless the request passed the guard
// (passed): one /healthz, or a 401, no longer keeps a connection alive. A
// refused request's unread body is drained for at most the drain timeout.
// Each write of an answer must finish within the write timeout.
func (t listenerTimeouts) withDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		now := time.Now()
		rc.SetReadDeadline(now.Add(t.body))
		rc.SetWriteDeadline(now.Add(t.write))
		w.Header().Set("Connection", "close")
		pw := &progressWriter{ResponseWriter: w, rc: rc, d: t.write}
		next.ServeHTTP(pw, r)
		if !pw.passed {
			rc.SetReadDeadline(time.Now().Add(t.drain))
		}
		// What the handler left in the buffer is written after it returns.
		rc.SetWriteDeadline(time.Now().Add(t.write))
	})
}

// passed is the guard's hook (guard.onPass) for a request it let through:
// the connection is authenticated, stays alive, and the request's body may
// take the body timeout (a bodiless request has no read deadline: a long
// answer, a stream, must not end because net/http's read of the idle
// connection timed out).
func (t listenerTimeouts) passed(w http.ResponseWriter, r *http.Request) {
	if pw, ok := w.(*progressWriter); ok {
		pw.passed = true
	}
	w.Header().Del("Connection")
	if gc, ok := r.Context().Value(gatedConnKey{}).(*gatedConn); ok {
		gc.l.authenticated(gc)
	}
	rc := http.NewResponseController(w)
	if r.ContentLength == 0 && len(r.TransferEncoding) == 0 {
		rc.SetReadDeadline(time.Time{})
	} else {
		rc.SetReadDeadline(time.Now().Add(t.body))
	}
}

// progressWriter moves the write deadline on before each write and flush,
// so a long answer is bounded per write rather than in all.
type progressWriter struct {
	http.ResponseWriter
	rc     *http.ResponseController
	d      time.Duration
	passed bool
}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.rc.SetWriteDeadline(time.Now().Add(w.d))
	return w.ResponseWriter.Write(p)
}

func (w *progressWriter) Flush() {
	w.rc.SetWriteDeadline(time.Now().Add(w.d))
	w.rc.Flush()
}

func (w *progressWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) { return w.rc.Hijack() }

func (w *progressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
