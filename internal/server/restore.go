package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/agents"
	"termkeep/internal/api"
	"termkeep/internal/holder"
	"termkeep/internal/server/restorepolicy"
	"termkeep/internal/session"
	"termkeep/internal/sessiondir"
	"termkeep/internal/shellinit"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// launch is what starting a session's process needs beyond its registry row.
type launch struct {
	command []string
	cwd     string
	env     []string // the whole environment of the child
	keepEnv []string // the subset recorded in meta.json
	banner  string   // written into the log before the child's output
	linger  time.Duration
}

// DefaultLinger is how long a holder reads on, by default, after the child
// exited while processes it left behind hold the terminal.
const DefaultLinger = 60 * time.Second

// maxLinger bounds --linger: a holder that lingers keeps its session
// running, and a kill ends it at any time.
const maxLinger = 24 * time.Hour

// parseLinger reads a linger as the API and meta.json give it: a Go
// duration ("0" for none), "" for the default.
func parseLinger(v string) (time.Duration, error) {
	if v == "" {
		return DefaultLinger, nil
	}
	d, err := time.ParseDuration(v)
	if v == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 || d > maxLinger {
		return 0, fmt.Errorf("linger %q is not a duration from 0 to %v (such as 30s or 5m)", v, maxLinger)
	}
	return d, nil
}

// start spawns sess's holder for l, has record write its pids to the
// registry, and connects a new host to it from the holder's first offset.
// The host replaces any other of the session's.
func (s *Server) start(sess store.Session, l launch, record func(pid, holderPid int) error) (*holder.Process, *session.Host, error) {
	dir := s.cfg.StateDir.Session(sess.ID)
	argv, env := l.command, l.env
	if sess.ShellIntegration {
		a, add, ok, err := shellinit.Setup(argv, dir, filepath.Join(dir, sessiondir.HistoryFile), env)
		switch {
		case err != nil:
			s.log.Warn("shell integration is off for this session", "session", sess.ID, "err", err)
		case ok:
			argv, env = a, mergeEnv(env, add)
		}
	}
	spec := holder.Spec{
		ID: sess.ID, Dir: dir, Command: argv, Env: env, KeepEnv: l.keepEnv,
		Cwd: l.cwd, Cols: uint16(sess.Cols), Rows: uint16(sess.Rows), Banner: l.banner,
		Name: sess.Name, Workspace: sess.Workspace, EnvPolicy: sess.EnvPolicy,
		Settings:     settingsOf(sess),
		LogRetention: s.cfg.LogRetention, LogSync: s.cfg.LogSync, Linger: l.linger,
	}
	proc, err := holder.Spawn(s.cfg.HolderArgv, spec, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	reaped := proc.Reaped() // reap the holder when it exits while we live
	// The new host goes in before the registry says the session runs: a
	// client that sees it running must not reach the host it replaces,
	// which a restore has closed.
	h := s.newHost(sess.ID, sess.SizePolicy)
	s.mu.Lock()
	s.hosts[sess.ID] = h
	s.mu.Unlock()
	if err := record(proc.Pid, proc.HolderPid); err != nil {
		s.log.Error("record pids", "session", sess.ID, "err", err)
	}
	if err := h.Connect(int64(proc.Start)); err != nil {
		if le := limitError(err); le != nil { // rlimit.go
			// The holder runs, but this server has no descriptor left to
			// reach it with: end it rather than keep a session no one can
			// reach, and let the caller undo the rest.
			s.log.Error("cannot reach the new holder; ending it", "session", sess.ID, "err", err)
			s.stopHolder(proc, reaped)
			s.mu.Lock()
			if s.hosts[sess.ID] == h {
				delete(s.hosts, sess.ID)
			}
			s.mu.Unlock()
			h.Close()
			return nil, nil, le
		}
		// The holder started but cannot be reached: it may have exited at
		// once (a command that fails immediately). Let the host decide.
		s.log.Warn("connect to new holder", "session", sess.ID, "err", err)
		// A moment for it to end, if it is ending: its end is on disk
		// once it is reaped.
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-reaped:
		case <-t.C:
		}
		t.Stop()
		h.MarkEnded(h.Resolve())
	}
	s.watchConversation(sess, h) // learnconv.go
	return proc, h, nil
}

// stopHolder ends a holder this server started and has not connected to,
// and waits until it is reaped: holder.CloseSignal (the holder closes its
// session on purpose: SIGHUP to the child, SIGKILL after its grace), then
// SIGKILL. Never SIGTERM, which a holder takes for the machine stopping.
func (s *Server) stopHolder(proc *holder.Process, reaped <-chan struct{}) {
	unix.Kill(proc.HolderPid, holder.CloseSignal)
	select {
	case <-reaped:
		return
	case <-time.After(10 * time.Second):
	}
	unix.Kill(proc.HolderPid, unix.SIGKILL)
	select {
	case <-reaped:
	case <-time.After(5 * time.Second):
		s.log.Error("a holder did not exit after SIGKILL", "pid", proc.HolderPid)
	}
}

// errRunning is returned by restore for a session that runs.
var errRunning = errors.New("the session is running")

// restore starts a new process in an ended or paused session: in its last
// working directory (else its workspace's, else home, saying so), at its
// size, with its saved environment over the base its policy gives
// (childenv.go: env, the caller's, or the server's; or a clean login
// environment, whatever env is), its history file, and its restore command when it has one. The
// log goes on at the next offset, after a banner line that says what
// happened. It returns the notices to show the user.
// holderGoneWait bounds a restore's wait for the ended session's holder to
// let go of its directory: it waits at most 5 s for its connections.
const holderGoneWait = 10 * time.Second

func (s *Server) restore(ctx context.Context, sess store.Session, env []string) (store.Session, []string, error) {
	s.restoreMu.Lock()
	defer s.restoreMu.Unlock()
	// The registry may have moved on while this call waited for the lock.
	sess, err := s.store.Session(ctx, sess.ID)
	if err != nil {
		return sess, nil, err
	}
	old := s.host(sess.ID)
	if sess.State == store.StateRunning || (old != nil && old.Exit() == nil) {
		return sess, nil, errRunning
	}
	if err := roomForSession(); err != nil { // rlimit.go
		return sess, nil, err
	}
	dir := s.cfg.StateDir.Session(sess.ID)
	meta, _ := sessiondir.ReadMeta(dir) // a missing meta.json leaves the registry's view

	env = childEnv(policyOf(sess), s.login, env, processEnv(), meta.Env, sess.ID)

	var notices []string
	cwd := sess.Cwd
	if !isDir(cwd) {
		fallback := ""
		if sess.Workspace != "" {
			if w, err := s.store.Workspace(ctx, sess.Workspace); err == nil && isDir(w.Dir) {
				fallback = w.Dir
			}
		}
		if home := envValue(env, "HOME"); fallback == "" && isDir(home) {
			fallback = home
		}
		if fallback == "" {
			if home, err := os.UserHomeDir(); err == nil && isDir(home) {
				fallback = home
			} else {
				fallback = "/"
			}
		}
		if cwd == "" {
			cwd = "(unknown)"
		}
		notices = append(notices, fmt.Sprintf("%s no longer exists; starting in %s", cwd, fallback))
		cwd = fallback
	}

	command := sess.Command
	if sess.RestoreCommand != "" {
		command = []string{"/bin/sh", "-c", sess.RestoreCommand}
	}
	if note := freshAgentStart(sess, env); note != "" {
		// Nothing to resume: the original command starts the agent again
		// under the same id, and the banner says so.
		command = sess.Command
		notices = append(notices, note)
	}
	if len(command) == 0 {
		// Recovered from a directory whose meta.json was lost.
		command = []string{"/bin/sh"}
		notices = append(notices, "its command is not known (its meta.json could not be read); starting /bin/sh")
	}
	if sess.Cols < 1 || sess.Rows < 1 {
		sess.Cols, sess.Rows = 80, 24
	}

	var cause restorepolicy.Cause
	if sess.State == store.StateInterrupted {
		cause = restorepolicy.Decide(s.restoreRecord(sess, false), s.boot, restorepolicy.All).Cause // boot.go
	}
	banner := restoreBanner(sess, cause, old != nil && old.AltScreen(ctx), s.cfg.Now(), notices)
	if old != nil {
		// The old host writes its last checkpoint; the new one starts from
		// it and the log after it.
		old.Close()
	}
	// The old holder sent its exit and is letting go of the directory
	// (closing its connections, syncing): a restore right after the end
	// (the page's Restore button) waits for it rather than failing.
	if !sessiondir.AwaitHolderGone(ctx, dir, holderGoneWait) {
		s.log.Warn("restore: the session's old holder still runs", "session", sess.ID)
	}
	linger, err := parseLinger(meta.Linger)
	if err != nil {
		linger = DefaultLinger // a meta.json edited by hand
	}
	proc, _, err := s.start(sess, launch{
		command: command, cwd: cwd, env: env, keepEnv: keepEnv(env, meta.Env), banner: banner, linger: linger,
	}, func(pid, holderPid int) error { return s.store.Restart(ctx, sess.ID, pid, holderPid) })
	if err != nil {
		// A holder that started and had to be ended again (rlimit.go) left
		// the row running: record that. Any other row is left as it was.
		s.recordEnd(sess.ID, wire.Exit{State: string(store.StateInterrupted), Reason: "the restore failed: " + err.Error()})
		if got, gerr := s.store.Session(ctx, sess.ID); gerr == nil {
			sess = got
		}
		// Put back a host for the ended session, so it stays readable.
		nh := s.newHost(sess.ID, sess.SizePolicy)
		nh.MarkEnded(exitFromStore(sess))
		s.mu.Lock()
		s.hosts[sess.ID] = nh
		s.mu.Unlock()
		return sess, notices, fmt.Errorf("cannot restore session %s: %w", ref(sess), err)
	}
	if err := s.store.SetCwd(ctx, sess.ID, cwd); err != nil {
		s.log.Warn("record working directory", "session", sess.ID, "err", err)
	}
	from := sess.State
	if got, err := s.store.Session(ctx, sess.ID); err == nil {
		sess = got
	}
	s.log.Info("session restored", "session", sess.ID, "was", from, "command", command, "cwd", cwd, "pid", proc.Pid)
	s.events.emit(store.EventSessionRestored, sess.ID, map[string]any{
		"was": string(from), "command": command, "cwd": cwd, "pid": proc.Pid, "offset": proc.Start, "notices": notices,
	})
	return sess, notices, nil
}

// freshAgentStart returns the note to show when sess is an agent's
// session pinned to a conversation the agent never recorded (no message
// was sent before it ended), for a child with environment env: resuming
// it would fail ("No conversation found"), so the restore starts afresh.
// "" means resume (also when that cannot be known).
//
// A session whose conversation is learned while it runs (codex) and was
// never seen has nothing to resume either: its restore command is the
// command again, and the note says so.
func freshAgentStart(sess store.Session, env []string) string {
	if sess.Agent == "" || len(sess.Command) == 0 {
		return ""
	}
	p, err := agents.Lookup(sess.Agent)
	if err != nil {
		return "" // a preset this termkeep no longer has: run what was recorded
	}
	if sess.AgentConversation == "" {
		return p.NotLearned(sess.Command, sess.RestoreCommand)
	}
	if sess.RestoreCommand == "" {
		return ""
	}
	return p.FreshStart(sess.AgentConversation, env, nil)
}

// restoreBanner is the line between the old screen and the new process. It
// first puts the terminal back in a plain state (the old program may have
// left the alternate screen, a scroll region, mouse reporting or hidden the
// cursor), then says what happened, dimmed, on lines of its own: for an
// interrupted session, the cause of its end as far as it is known.
func restoreBanner(sess store.Session, cause restorepolicy.Cause, altScreen bool, now time.Time, notices []string) string {
	var b strings.Builder
	if altScreen {
		b.WriteString("\x1b[?1049l")
	}
	// Mouse tracking, focus events, bracketed paste off; then DECSTR (soft
	// reset: cursor shown, margins, modes, attributes).
	b.WriteString("\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?2004l\x1b[!p")
	at := now.Local().Format("15:04")
	var what string
	switch sess.State {
	case store.StateInterrupted:
		what = "restored at " + at + ", previous process interrupted"
		if t := cause.Text(); t != "" {
			what = "restored at " + at + " after " + t + ", previous process ended"
		}
	case store.StatePaused:
		what = "resumed at " + at
		if sess.Workspace != "" {
			what += " (workspace " + sess.Workspace + " was paused)"
		}
	case store.StateExited:
		what = "restarted at " + at + ", previous process exited"
		if sess.ExitCode != nil {
			what += fmt.Sprintf(" with status %d", *sess.ExitCode)
		}
	default:
		what = "restarted at " + at + ", previous process was ended"
	}
	b.WriteString("\r\n\x1b[2m── " + what + " ──\x1b[0m\r\n")
	for _, n := range notices {
		b.WriteString("\x1b[2m── " + n + " ──\x1b[0m\r\n")
	}
	return b.String()
}

// handleRestore is POST /v1/sessions/{ref}/restore (and /api/…).
func (s *Server) handleRestore(w http.ResponseWriter, r *http.Request, sess store.Session, _ *session.Host) {
	var req api.RestoreRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &req); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	}
	if err := checkEnv(nil, req.Env); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	got, notices, err := s.restore(r.Context(), sess, req.Env)
	switch {
	case errors.Is(err, errRunning):
		writeError(w, http.StatusConflict, "session %s is running; only an ended or paused session can be restored", ref(sess))
		return
	case err != nil:
		status, err := s.unavailable(http.StatusInternalServerError, err) // registry.go
		writeError(w, status, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, api.Restored{Session: s.view(got, s.host(got.ID)), Notices: notices})
}

// autoRestore restores, in the background, every session the restore
// policy brings back by itself: interrupted (by the machine's restart or
// its holder's death), not known to have exited, and asking for it (its
// own --auto-restore, or its workspace's).
func (s *Server) autoRestore(ctx context.Context) {
	list, err := s.store.SessionsInState(ctx, store.StateInterrupted)
	if err != nil {
		s.log.Error("auto-restore: list sessions", "err", err)
		return
	}
	wsAuto := map[string]bool{}
	if all, err := s.store.Workspaces(ctx); err == nil {
		for _, w := range all {
			wsAuto[w.Name] = w.AutoRestore && !w.Paused
		}
	}
	for _, sess := range list {
		d := restorepolicy.Decide(s.restoreRecord(sess, wsAuto[sess.Workspace]), s.boot, restorepolicy.Auto) // boot.go
		if !d.Restore {
			if sess.AutoRestore || wsAuto[sess.Workspace] {
				s.log.Info("auto-restore: not restoring the session", "session", sess.ID, "why", d.Why)
			}
			continue
		}
		s.log.Info("auto-restore", "session", sess.ID, "cause", d.Cause)
		if _, _, err := s.restore(ctx, sess, nil); err != nil {
			s.log.Error("auto-restore", "session", sess.ID, "err", err)
		}
	}
}
