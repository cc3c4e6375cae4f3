// Package server is `termkeep serve`: it owns the registry, starts holders,
// keeps one session host per session, and serves the API on the state
// directory's unix socket.
//
// The server holds nothing a session needs to survive: holders own the ptys
// and the logs. A server that crashes, is killed or is upgraded loses no
// output; the next one finds every session in the registry, reconnects to
// each live holder and resumes from the log's end, and records the end of
// those whose holder is gone (exited with the status on disk, or
// interrupted).
package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/bootid"
	"termkeep/internal/holder"
	"termkeep/internal/peercred"
	"termkeep/internal/server/restorepolicy"
	"termkeep/internal/session"
	"termkeep/internal/session/sizepolicy"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// Config is every knob of the server, one struct filled from defaults, the
// environment and flags (see cmd/termkeep).
type Config struct {
	StateDir statedir.Dir
	// HolderArgv starts a holder: the termkeep-holder binary, or the termkeep
	// binary with its hidden holder argument.
	HolderArgv []string
	// LogRetention is the per-session output log cap in bytes (0 = 64 MiB).
	LogRetention int64
	// LogSync is the fsync policy: "interval" (at most once a second and at
	// exit), "always" or "never".
	LogSync string
	// KillGrace is the time between SIGHUP and SIGKILL when a session is killed.
	KillGrace time.Duration
	// ViewerQueue is how far (bytes) a live viewer may fall behind before it
	// is resynced with a snapshot (0: 1 MiB).
	ViewerQueue int
	// PingInterval and PongTimeout govern viewer liveness (0: 30s and 10s).
	PingInterval, PongTimeout time.Duration
	// HolderTimeout is how long a holder has to answer a ping before its
	// session is shown unresponsive (and a kill SIGKILLs it), and to take
	// a write before the write fails (0: session.DefaultHolderTimeout).
	HolderTimeout time.Duration
	// SizePolicy is how a session's size follows its viewers: latest or smallest.
	SizePolicy sizepolicy.Policy
	// Version is the termkeep version reported by /v1/health.
	Version string
	// Listen is the TCP address browsers reach the server on, e.g.
	// "127.0.0.1:7420" (port 0: any free port); "" means no TCP listener.
	// An address that cannot be listened on is logged, not fatal. One that
	// is not loopback needs TLSCert and TLSKey, or InsecureNoTLS (tls.go).
	Listen string
	// ListenFrom says where Listen came from ("--listen", "TERMKEEP_LISTEN"
	// or "default"), for the log: a server started by a client takes its
	// address from that client's environment, not from the server before.
	ListenFrom string
	// TLSCert and TLSKey are PEM files: with them the listener serves HTTPS
	// and WSS.
	TLSCert, TLSKey string
	// InsecureNoTLS allows plain HTTP on a non-loopback Listen address.
	InsecureNoTLS bool
	// AllowedOrigins are more origins ("https://term.example.com") whose
	// pages may use the listener, and whose hosts it answers to.
	AllowedOrigins []string
	// MaxSessions is how many running sessions one user may have
	// (0: DefaultMaxSessions).
	MaxSessions int
	// MaxViewersPerToken is how many viewers one registry token may have
	// open at once on the browser listener (0:
	// DefaultMaxViewersPerToken). The owner's credential has five times it.
	MaxViewersPerToken int
	// KeepEnded and KeepEndedBytes bound the exited and closed sessions
	// kept, in number and in their directories' total size (0: the
	// defaults, DefaultKeepEnded and DefaultKeepEndedBytes; below 0: no
	// bound). Past them, the oldest ended are removed (prune.go).
	KeepEnded      int
	KeepEndedBytes int64
	// WebUI serves the browser UI's pages on the TCP listener, to anyone
	// who passes the Host and Origin checks (the pages hold no data; they
	// sign in by themselves); nil serves a short placeholder.
	WebUI http.Handler
	// OrphanGrace ends a session this long after its last viewer left, and
	// IdleTimeout one with no output and no input for this long (0: never;
	// see policy.go).
	OrphanGrace, IdleTimeout time.Duration
	// RegistryRetry is the longest wait between writes of a session's end
	// the registry refused for a reason time can lift (locked, read-only,
	// a full disk); the first comes after an eighth of it (0: 10 s).
	RegistryRetry time.Duration
	// QuietAfter is how long a session prints nothing before it is quiet
	// (quiet_since, the session.quiet event; quiet.go): 0 means
	// session.DefaultQuietAfter, a negative value turns the rule off.
	QuietAfter time.Duration

	Logger *slog.Logger
	Now    func() time.Time

	// timeouts replaces the browser listener's defaultTimeouts (tests).
	timeouts *listenerTimeouts
}

// Server is a running termkeep server.
type Server struct {
	cfg   Config
	log   *slog.Logger
	store *store.Store
	lock  *os.File
	ln    net.Listener
	http  *http.Server
	gw    *gateway // nil when there is no TCP listener

	events *eventHub
	tokens *tokenDesk // access tokens and share links (tokens.go)

	mu    sync.Mutex // guards hosts and endFailures
	hosts map[string]*session.Host
	// endFailures counts, by session, the refusals of its end by the
	// registry since the last write of it that was taken.
	endFailures map[string]int
	endRetry    endRetry // registry.go

	restoreMu sync.Mutex // one restore at a time
	quota     sessionQuota

	// gwTLS is the listener's TLS configuration (nil: plain HTTP) and
	// origins the allowed origins, both checked by New (tls.go).
	gwTLS   *tls.Config
	origins []*url.URL

	done     chan struct{} // closed by Shutdown
	doneOnce sync.Once
	endSess  bool // shutdown ends sessions too

	// bg owns the goroutines the server starts that outlive the call that
	// started them (goBackground): bgCtx is cancelled as the server
	// closes, and every one is waited for before the registry closes.
	bg       sync.WaitGroup
	bgCtx    context.Context
	bgCancel context.CancelFunc

	metrics     *metrics         // metrics.go
	replay      *replayer        // replay.go
	timeouts    listenerTimeouts // the browser listener's (gatelistener.go)
	startedAt   time.Time        // when New began
	startupDone atomic.Bool      // recovery and auto-restore are over (readiness)
	login       loginIdentity    // what a clean login environment is made of (childenv.go)
	prune       pruner           // prune.go
	// boot is the machine's current boot (package bootid; "" unknown),
	// against which the boot each session's holder started in is judged
	// (boot.go).
	boot string
}

// ErrAlreadyRunning is returned by New when another server owns the state directory.
var ErrAlreadyRunning = errors.New("server: another termkeep server is running on this state directory")

// New prepares a server: it takes the state directory's lock, opens the
// registry, reconnects to every live holder and listens on the API socket.
// Call Serve to answer requests.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 3 * time.Second
	}
	if len(cfg.HolderArgv) == 0 {
		return nil, errors.New("server: no holder command configured")
	}
	gwTLS, origins, err := gatewayTLS(cfg)
	if err != nil {
		return nil, err
	}
	if err := cfg.StateDir.Ensure(); err != nil {
		return nil, err
	}
	// The registry's faults (registry.go) fail the start with a sentence,
	// before any session is looked at: a live holder is never touched.
	if re := stateDirReadOnly(cfg.StateDir.String(), cfg.StateDir.DB()); re != nil {
		cfg.Logger.Error(re.Error(), "err", re.Err)
		return nil, re
	}
	lock, err := os.OpenFile(cfg.StateDir.ServerLock(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("server: open lock: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, ErrAlreadyRunning
	}
	lock.Truncate(0)
	fmt.Fprintf(lock, "%d\n", os.Getpid())

	st, err := store.Open(ctx, cfg.StateDir.DB(), cfg.Now)
	if err != nil {
		lock.Close()
		return nil, registryAtStart(cfg.Logger, cfg.StateDir.DB(), err)
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger, store: st, lock: lock,
		hosts: make(map[string]*session.Host), done: make(chan struct{}),
		endFailures: make(map[string]int), endRetry: endRetry{max: cmp.Or(cfg.RegistryRetry, registryRetry)},
		gwTLS: gwTLS, origins: origins, startedAt: cfg.Now(), timeouts: defaultTimeouts,
		login: serverIdentity(processEnv()),
		prune: pruner{kick: make(chan struct{}, 1)},
	}
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	if cfg.timeouts != nil {
		s.timeouts = *cfg.timeouts
	}
	if s.boot, err = bootid.Current(); err != nil {
		s.log.Warn("the machine's boot is not known: a restart of the machine will not be told from a holder's death", "err", err)
	}
	s.metrics = newMetrics(s)
	s.replay = newReplayer(cfg.StateDir, cfg.Now, s.log)
	s.events = newEventHub(ctx, st, s.log)
	s.events.metrics = s.metrics
	s.tokens = &tokenDesk{store: st, now: cfg.Now, log: s.log, events: s.events, gw: func() *gateway { return s.gw }}
	s.reportGeneration() // registry.go
	if err := s.recover(ctx); err != nil {
		s.stopBackground()
		st.Close()
		lock.Close()
		return nil, registryAtStart(cfg.Logger, cfg.StateDir.DB(), err)
	}
	sock := cfg.StateDir.Socket()
	os.Remove(sock) // we hold the lock: any socket here is a dead server's
	old := unix.Umask(0o177)
	ln, err := net.Listen("unix", sock)
	unix.Umask(old)
	if err != nil {
		s.stopBackground()
		s.closeHosts()
		st.Close()
		lock.Close()
		return nil, fmt.Errorf("server: listen on %s: %w", sock, err)
	}
	// A server answers again: clients waiting after a shutdown reconnect,
	// and those that lose this one start another.
	os.Remove(cfg.StateDir.Stopped())
	s.ln = &peerCheckListener{Listener: ln, log: s.log}
	s.http = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	s.gw = startGateway(s)
	return s, nil
}

// recover builds a host for every session in the registry and reconnects to
// the live ones.
func (s *Server) recover(ctx context.Context) error {
	all, err := s.store.Sessions(ctx)
	if err != nil {
		return err
	}
	known := make(map[string]bool, len(all))
	for _, sess := range all {
		known[sess.ID] = true
	}
	// A session directory the registry does not know (a registry restored
	// from a backup, or lost) still has a holder that may be running, and
	// a log: adopt it from its meta.json rather than leave it unreachable,
	// and when meta.json is damaged or gone, from what the directory still
	// tells (sessiondir.Salvage), with what is lost marked.
	dirs, _ := os.ReadDir(s.cfg.StateDir.SessionsDir())
	for _, d := range dirs {
		if !d.IsDir() || known[d.Name()] {
			continue
		}
		dir := s.cfg.StateDir.Session(d.Name())
		m, err := sessiondir.ReadMeta(dir)
		var unknown []string
		if err != nil {
			var serr error
			m, unknown, serr = sessiondir.Salvage(dir)
			if serr != nil {
				continue // not a session's directory
			}
			s.log.Warn("a session directory's meta.json cannot be read: adopting the session from its directory, status record and log",
				"session", m.ID, "err", err, "unknown", unknown)
		}
		if m.ID != d.Name() {
			continue
		}
		sess := store.Session{
			ID: m.ID, Name: m.Name, Workspace: m.Workspace, Command: m.Command, Cwd: m.Cwd, Cols: int(m.Cols), Rows: int(m.Rows),
			Owner: currentUser(), State: store.StateRunning, Pid: m.Pid, HolderPid: m.HolderPid,
			CreatedAt: m.StartedAt, EnvPolicy: m.EnvPolicy, AutoRestore: m.AutoRestore, RestoreCommand: m.RestoreCommand,
			SizePolicy: m.SizePolicy, ShellIntegration: !m.NoShellIntegration,
		}
		if unknown != nil {
			sess.Reason = sessiondir.SalvagedReason(unknown)
		}
		err = s.store.CreateSession(ctx, sess)
		if errors.Is(err, store.ErrNameTaken) {
			s.log.Warn("adopted session's name is taken; adopting it without", "session", m.ID, "name", m.Name)
			sess.Name = ""
			err = s.store.CreateSession(ctx, sess)
		}
		if err != nil {
			s.log.Warn("adopt session directory", "session", m.ID, "err", err)
			continue
		}
		s.log.Info("adopted a session the registry did not know", "session", m.ID)
		got, err := s.store.Session(ctx, m.ID)
		if err == nil {
			all = append(all, got)
		}
	}
	live := 0
	rolledBack := s.store.Generation().Rollback != nil
	ended := map[string]bool{} // sessions whose end this server recorded
	var warm []*session.Host   // ended: their screens are readied in the background (warm.go)
	for _, sess := range all {
		h := s.newHost(sess.ID, sess.SizePolicy)
		s.hosts[sess.ID] = h
		if sess.State.Ended() || sess.State == store.StatePaused {
			h.MarkEnded(exitFromStore(sess))
			warm = append(warm, h)
			s.keepSettings(sess) // registry.go
			continue
		}
		if err := h.Connect(-1); err != nil {
			if le := limitError(err); le != nil && sess.HolderPid > 0 && unix.Kill(sess.HolderPid, 0) == nil { // rlimit.go
				// Not ended: its holder runs (without a descriptor, a
				// signal 0 is all that tells), and a session recorded as
				// interrupted could be restored over it.
				s.log.Error("cannot reach a live holder; its session stays running, unreachable until the server restarts with a higher limit",
					"session", sess.ID, "problem", le.Error(), "err", err)
				continue
			}
			if errors.Is(err, session.ErrHolderSilent) {
				// Its socket takes connections, its process says nothing
				// (stopped, wedged): shown unresponsive; a kill SIGKILLs it.
				s.log.Error("a live holder does not answer; its session stays running, unresponsive, unreachable until the server restarts or the session is killed",
					"session", sess.ID, "err", err)
				continue
			}
			if sessiondir.HolderRuns(s.cfg.StateDir.Session(sess.ID)) {
				// Its lock is held: the holder runs, its socket removed
				// under it. Recorded as ended, it could be restored over.
				s.log.Error("a live holder cannot be reached: its socket is gone; its session stays running, unreachable until the holder ends",
					"session", sess.ID, "err", err)
				continue
			}
			e := h.Resolve()
			s.log.Info("session's holder is gone", "session", sess.ID, "name", sess.Name, "state", e.State, "reason", e.Reason, "err", err)
			h.MarkEnded(e)
			ended[sess.ID] = true
			warm = append(warm, h)
			s.keepSettings(sess)
			continue
		}
		live++
		s.reconcileName(ctx, h, sess, rolledBack) // registry.go
		s.watchConversation(sess, h)              // learnconv.go
	}
	s.log.Info("registry loaded", "sessions", len(all), "live", live)
	s.noticeRestart(ctx, ended)                                            // boot.go
	s.goBackground(func(ctx context.Context) { s.warmScreens(ctx, warm) }) // warm.go
	return nil
}

// endState is the registry's state for an end e.
func endState(e wire.Exit) store.State {
	switch st := store.State(e.State); st {
	case store.StateExited, store.StateClosed, store.StateInterrupted:
		return st
	}
	return store.StateInterrupted
}

func exitFromStore(sess store.Session) wire.Exit {
	return wire.Exit{State: string(sess.State), ExitCode: sess.ExitCode, Reason: sess.Reason}
}

func (s *Server) newHost(id, sizePolicy string) *session.Host {
	h := session.New(session.Config{
		ID: id, Dir: s.cfg.StateDir.Session(id), Log: s.log, Meter: s.metrics.hostMeter(), HolderTimeout: s.cfg.HolderTimeout,
		OnEnd: func(e wire.Exit) { s.recordEnd(id, e) },
		OnCwd: func(dir string) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			err := s.store.SetCwd(ctx, id, dir)
			s.metrics.observeWrite("cwd", start, err)
			if err != nil {
				s.log.Warn("record working directory", "session", id, "err", err)
			}
		},
	})
	policy := s.cfg.SizePolicy
	if p, err := sizepolicy.Parse(sizePolicy); err == nil && sizePolicy != "" {
		policy = p
	}
	if policy != "" {
		h.SetSizePolicy(policy)
	}
	return h
}

// viewerOptions is how the server serves a viewer of sess, whatever its
// transport.
func (s *Server) viewerOptions(sess store.Session, kind wire.ViewerKind, readOnly bool) session.ViewerOptions {
	return session.ViewerOptions{
		ReadOnly: readOnly, Name: sess.Name, Kind: kind, Queue: s.cfg.ViewerQueue,
		PingInterval: s.cfg.PingInterval, PongTimeout: s.cfg.PongTimeout,
	}
}

// recordEnd writes a session's end to the registry. It is the only place a
// session leaves running.
func (s *Server) recordEnd(id string, e wire.Exit) {
	st := endState(e)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var cause restorepolicy.Cause
	if st == store.StateInterrupted {
		cause, e.Reason = s.endCause(id, e) // boot.go
	}
	start := time.Now()
	changed, err := s.store.EndCause(ctx, id, st, e.ExitCode, e.Reason, string(cause))
	s.metrics.observeWrite("end", start, err)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.mu.Lock()
		s.endFailures[id]++
		failures := s.endFailures[id]
		s.mu.Unlock()
		s.log.Error("record session end", "session", id, "err", err, "attempt", failures)
		s.retryEnd(id, e, err, failures) // registry.go
		return
	}
	s.mu.Lock()
	failures := s.endFailures[id]
	delete(s.endFailures, id)
	s.mu.Unlock()
	if failures > 0 {
		s.log.Info("recorded a session end the registry had refused", "session", id, "refusals", failures)
	}
	if changed {
		code := "unknown"
		if e.ExitCode != nil {
			code = fmt.Sprint(*e.ExitCode)
		}
		name := ""
		if sess, err := s.store.Session(ctx, id); err == nil {
			name = sess.Name
		}
		s.log.Info("session ended", "session", id, "name", name, "state", st, "exit_code", code, "reason", e.Reason, "cause", cause)
		s.endEvent(id, st, e, cause)
		if prunable(st) {
			s.kickPrune() // prune.go
		}
	}
}

// Serve answers API requests until Shutdown or ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	stopQuiet := s.startQuietWatch() // quiet.go; before the first request
	errc := make(chan error, 1)
	s.goBackground(func(context.Context) { errc <- s.http.Serve(s.ln) })
	listen := ""
	if s.gw != nil {
		s.goBackground(func(context.Context) { s.gw.serve() })
		listen = s.gw.url
	}
	s.log.Info("server started", "version", s.cfg.Version, "pid", os.Getpid(), "state_dir", s.cfg.StateDir.String(),
		"socket", s.cfg.StateDir.Socket(), "listen", listen, "listen_from", s.cfg.ListenFrom)
	stopPolicies := s.startPolicies()
	stopLogind := s.watchShutdown()
	stopPruner := s.runPruner(ctx) // prune.go
	// Sessions that asked for it come back by themselves after a reboot;
	// the server answers meanwhile, not ready (/readyz) until they have.
	restored := make(chan struct{})
	go func() {
		defer close(restored)
		s.autoRestore(ctx)
		s.startupDone.Store(true)
	}()
	select {
	case <-ctx.Done():
	case <-s.done:
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			stopPolicies()
			stopPruner()
			stopLogind()
			stopQuiet()
			<-restored
			s.close()
			return fmt.Errorf("server: serve: %w", err)
		}
	}
	s.log.Info("server stopping", "end_sessions", s.endSess)
	s.markStopped()
	stopPolicies()
	<-restored
	stopPruner()
	stopLogind()
	stopQuiet()
	if s.endSess {
		s.killAll()
	}
	s.close()
	return nil
}

// markStopped records, before any connection is closed, that this stop
// is on purpose (termkeep shutdown, SIGTERM, Ctrl-C): the clients it
// leaves wait for a server to be started rather than start one, as a
// killed server's clients would. A crash or SIGKILL runs no code, so
// leaves no mark, and its clients start a server again at once.
func (s *Server) markStopped() {
	b := fmt.Appendf(nil, "%d\n", os.Getpid())
	if err := os.WriteFile(s.cfg.StateDir.Stopped(), b, 0o600); err != nil {
		s.log.Warn("the stop could not be marked: attached clients may start a server again", "err", err)
	}
}

// Shutdown asks Serve to return; with endSessions every running session is
// killed first.
func (s *Server) Shutdown(endSessions bool) {
	s.doneOnce.Do(func() {
		s.endSess = endSessions
		close(s.done)
	})
}

// goBackground runs f in a goroutine the server owns: f's ctx ends as the
// server closes, and close waits for f to return before it closes the
// registry.
func (s *Server) goBackground(f func(ctx context.Context)) {
	s.bg.Add(1)
	go func() { // not bg.Go: a goroutine dump names goBackground as its creator
		defer s.bg.Done()
		f(s.bgCtx)
	}()
}

// stopBackground ends the context of every goroutine goBackground started
// and waits for them all.
func (s *Server) stopBackground() {
	s.bgCancel()
	s.bg.Wait()
}

// close stops the server in the order that loses nothing: the listeners
// (event streams ended first, so the HTTP shutdown does not wait for
// them), then every host, each of which has recorded any end its holder
// reported by the time it has stopped and makes no connection again, then
// every goroutine the server started (goBackground), and only then the
// events and the registry those ends are written to.
func (s *Server) close() {
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.events.endFollowers()
	if s.gw != nil {
		s.gw.close(sctx)
	}
	s.http.Shutdown(sctx)
	s.http.Close()
	s.closeHosts()
	s.stopBackground()
	s.events.close()
	s.store.Close()
	os.Remove(s.cfg.StateDir.Socket())
	s.lock.Close()
}

// allHosts returns every session's host at this moment.
func (s *Server) allHosts() []*session.Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	hosts := make([]*session.Host, 0, len(s.hosts))
	for _, h := range s.hosts {
		hosts = append(hosts, h)
	}
	return hosts
}

// closeHosts closes every host and returns once all have stopped.
func (s *Server) closeHosts() {
	for _, h := range s.allHosts() {
		h.Close()
	}
}

func (s *Server) killAll() {
	var wg sync.WaitGroup
	for _, h := range s.allHosts() {
		if h.Exit() != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.kill(h)
		}()
	}
	wg.Wait()
}

// signalClose asks session id's holder process to close its session on
// purpose, with the signal its protocol version takes for that
// (holder.CloseSignalFor), for when its socket cannot reach it. Only when
// the pid meta.json names is still a holder: pids are reused. It reports
// whether it sent the signal.
func (s *Server) signalClose(id string) bool {
	m, err := sessiondir.ReadMeta(s.cfg.StateDir.Session(id))
	if err != nil || m.HolderPid <= 0 || !holder.IsHolder(m.HolderPid) {
		return false
	}
	return unix.Kill(m.HolderPid, holder.CloseSignalFor(m.Version)) == nil
}

// host returns the host of session id.
func (s *Server) host(id string) *session.Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[id]
}

// peerCheckListener accepts only peers running as the server's own uid
// (SO_PEERCRED), as tmux does: the socket's mode is the first fence, this
// is the second.
type peerCheckListener struct {
	net.Listener
	log *slog.Logger
}

func (l *peerCheckListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uc, ok := c.(*net.UnixConn)
		if !ok {
			return c, nil
		}
		if peerUID(uc) == os.Getuid() {
			return c, nil
		}
		l.log.Warn("refused a connection from another user on the API socket")
		c.Close()
	}
}

func peerUID(c *net.UnixConn) int {
	uid, err := peercred.UID(c)
	if err != nil {
		return -1
	}
	return uid
}

// newID returns a fresh session id: 8 characters of lowercase base32,
// starting with a letter so an id never reads as a number.
func newID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	var b [8]byte
	rand.Read(b[:])
	out := make([]byte, 8)
	for i, c := range b {
		out[i] = alphabet[int(c)%32]
	}
	out[0] = alphabet[int(b[0])%26]
	return string(out)
}

// checkName validates a session name.
func checkName(name string) error {
	if name == "" {
		return nil
	}
	if p := sessionNameProblem(name); p != "" {
		return fmt.Errorf("session name %q is not allowed: %s", name, p)
	}
	return nil
}

// keepEnv returns the subset of env that may be recorded on disk: the
// allowlist plus the names set explicitly, never a name that looks secret.
func keepEnv(env []string, explicit []string) []string {
	allowed := map[string]bool{"TERM": true, "LANG": true, "SHELL": true, "PATH": true}
	for _, kv := range explicit {
		k, _, _ := strings.Cut(kv, "=") // KEY=VALUE from --env, or a bare name from --keep-env
		allowed[k] = true
	}
	var out []string
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if !(allowed[k] || strings.HasPrefix(k, "LC_")) || looksSecret(k) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func looksSecret(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// mergeEnv returns base with the KEY=VALUE pairs of set applied in order.
func mergeEnv(base, set []string) []string {
	idx := make(map[string]int, len(base))
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range append(append([]string{}, base...), set...) {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if i, seen := idx[k]; seen {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
