package server

import (
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Wrong tokens are counted per remote address (an IPv6 address by its /64,
// which one machine usually holds whole): past LoginFailures in a minute,
// that address's wrong tokens are answered 429 until the minute is over.
//
// Only failures are limited. A request with a right token is let through
// whatever its address has tried before, so a browser behind the same NAT,
// proxy or loopback address as a guesser keeps working. That does not help
// the guesser: a token is 256 random bits, so the limit is not what makes
// guessing hopeless; it keeps a guesser slow, visible in the log, and from
// costing the server a registry lookup per try at full speed.
const (
	LoginFailures = 10
	loginWindow   = time.Minute
	// loginMaxAddrs bounds the addresses remembered; past it the expired
	// ones are forgotten, and if that is not enough, all of them.
	loginMaxAddrs = 1 << 16
)

// loginLimiter counts wrong tokens per address in fixed one-minute windows.
type loginLimiter struct {
	now func() time.Time
	log *slog.Logger
	mu  sync.Mutex // guards addrs
	// addrs maps an address key to its window: when it began and how many
	// failures it holds.
	addrs map[string]*loginWindowCount
}

type loginWindowCount struct {
	start time.Time
	n     int
}

func newLoginLimiter(now func() time.Time, log *slog.Logger) *loginLimiter {
	return &loginLimiter{now: now, log: log, addrs: make(map[string]*loginWindowCount)}
}

// fail records a wrong token from remote (an http.Request's RemoteAddr) and
// reports, when that address has now failed more than LoginFailures times in
// its window, how long until the window ends.
func (l *loginLimiter) fail(remote string) (blocked bool, retry time.Duration) {
	key := addrKey(remote)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.addrs[key]
	if w == nil || now.Sub(w.start) >= loginWindow {
		if w == nil && len(l.addrs) >= loginMaxAddrs {
			l.prune(now)
		}
		w = &loginWindowCount{start: now}
		l.addrs[key] = w
	}
	w.n++
	if w.n <= LoginFailures {
		return false, 0
	}
	if w.n == LoginFailures+1 {
		l.log.Warn("too many wrong access tokens from one address; refusing its wrong tokens for the rest of the minute",
			"addr", key, "failures", w.n)
	}
	return true, w.start.Add(loginWindow).Sub(now)
}

func (l *loginLimiter) prune(now time.Time) {
	for k, w := range l.addrs {
		if now.Sub(w.start) >= loginWindow {
			delete(l.addrs, k)
		}
	}
	if len(l.addrs) >= loginMaxAddrs {
		clear(l.addrs)
	}
}

// addrKey is the address a failure counts against: the IP of host:port,
// an IPv6 address's /64.
func addrKey(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// presentsToken reports whether r offers a secret at all: a request
// without one (a first visit) is not a wrong guess.
func presentsToken(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	_, ok := wsAuth(r.Header.Values("Sec-WebSocket-Protocol"))
	return ok
}

// deny answers a request whose token is missing or wrong: 401 as refuse
// does, or 429 when its address has guessed too often this minute. A
// credential that once worked (ended) is no guess: a page whose link was
// revoked is told so, not limited.
func (g *guard) deny(w http.ResponseWriter, r *http.Request, ended string) {
	if g.limiter != nil && ended == "" && presentsToken(r) {
		if blocked, retry := g.limiter.fail(r.RemoteAddr); blocked {
			secs := int(retry.Round(time.Second) / time.Second)
			w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
			writeError(w, http.StatusTooManyRequests,
				"more than %d wrong access tokens from your address in a minute; try again in %d seconds with the address `termkeep url` prints",
				LoginFailures, max(secs, 1))
			return
		}
	}
	g.refuse(w, r, ended)
}
