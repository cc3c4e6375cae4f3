package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"termkeep/internal/shellmark"
	"time"

	"termkeep/internal/agents"
	"termkeep/internal/api"
	"termkeep/internal/fdpass"
	"termkeep/internal/outlog"
	"termkeep/internal/server/restorepolicy"
	"termkeep/internal/session"
	"termkeep/internal/session/sizepolicy"
	"termkeep/internal/sessiondir"
	"termkeep/internal/shellinit"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// maxJSONBody bounds JSON request bodies: room for an environment of
// MaxEnvBytes and its JSON quoting.
const maxJSONBody = 2 << 20

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", s.handleHealth)
	mux.HandleFunc("GET /v1/sessions", s.handleList)
	mux.HandleFunc("POST /v1/sessions", s.handleCreate)
	mux.HandleFunc("GET /v1/sessions/{ref}", s.withSession(s.handleGet))
	mux.HandleFunc("POST /v1/sessions/{ref}/kill", s.withSession(s.handleKill))
	mux.HandleFunc("DELETE /v1/sessions/{ref}", s.withSession(s.handleRemove))
	mux.HandleFunc("POST /v1/sessions/{ref}/input", s.withSession(s.handleInput))
	mux.HandleFunc("POST /v1/sessions/{ref}/send", s.withSession(s.handleSend)) // send.go
	mux.HandleFunc("GET /v1/sessions/{ref}/output", s.withSession(s.handleOutput))
	mux.HandleFunc("GET /v1/sessions/{ref}/attach", s.withSession(s.handleAttach))
	mux.HandleFunc("GET /v1/sessions/{ref}/screen", s.withSession(s.handleScreen))
	mux.HandleFunc("GET /v1/sessions/{ref}/export", s.withSession(s.handleExport))        // export.go
	mux.HandleFunc("GET /v1/sessions/{ref}/grep", s.withSession(s.handleGrep))            // export.go
	mux.HandleFunc("GET /v1/sessions/{ref}/replay", s.withSession(s.replay.handleReplay)) // replay.go
	mux.HandleFunc("GET /v1/sessions/{ref}/replay/screen", s.withSession(s.replay.handleReplayScreen))
	mux.HandleFunc("GET /v1/sessions/{ref}/replay/output", s.withSession(s.replay.handleReplayOutput))
	mux.HandleFunc("POST /v1/sessions/{ref}/restore", s.withSession(s.handleRestore))
	mux.HandleFunc("POST /v1/sessions/{ref}/size", s.withSession(s.handleSize)) // size.go
	mux.HandleFunc("GET /v1/workspaces", s.handleWorkspaces)
	mux.HandleFunc("POST /v1/workspaces", s.handleWorkspaceCreate)
	mux.HandleFunc("GET /v1/workspaces/{name}", s.withWorkspace(s.handleWorkspaceGet))
	mux.HandleFunc("POST /v1/workspaces/{name}/pause", s.withWorkspace(s.handleWorkspacePause))
	mux.HandleFunc("POST /v1/workspaces/{name}/resume", s.withWorkspace(s.handleWorkspaceResume))
	mux.HandleFunc("DELETE /v1/workspaces/{name}", s.withWorkspace(s.handleWorkspaceRemove))
	mux.HandleFunc("POST /v1/shutdown", s.handleShutdown)
	mux.HandleFunc("GET /v1/events", s.handleEvents)
	mux.HandleFunc("GET /v1/stats", s.handleStats)             // stats.go
	mux.HandleFunc("GET /metrics", s.handleMetrics)            // metrics.go
	mux.HandleFunc("GET /healthz", s.handleHealthz)            // stats.go
	mux.HandleFunc("GET /readyz", s.handleReadyz)              // stats.go
	mux.HandleFunc("GET /debug/pprof/{name}", s.handleProfile) // profile.go: here only, never on the browser listener
	s.accessRoutes(mux)
	return asOwner(mux)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if h, ok := hiderOf(w); ok { // pathhide.go: not the owner
		msg = hidePaths(msg, h.paths)
	}
	writeJSON(w, code, api.Error{Error: msg})
}

// queryBool reads the query parameter name as 0 or 1 (false or true), def
// when it is absent or empty.
func queryBool(r *http.Request, name string, def bool) (bool, error) {
	switch r.URL.Query().Get(name) {
	case "":
		return def, nil
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, fmt.Errorf("%s must be 0 or 1", name)
}

func decodeJSON(r *http.Request, v any) error {
	lr := &io.LimitedReader{R: r.Body, N: maxJSONBody + 1}
	dec := json.NewDecoder(lr)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if lr.N <= 0 {
			return fmt.Errorf("request body larger than %d MiB", maxJSONBody>>20)
		}
		return fmt.Errorf("bad request body: %v", err)
	}
	return nil
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	h := api.Health{Version: s.cfg.Version, Protocol: wire.Version, Pid: os.Getpid()}
	if principalOf(r.Context()).owner {
		h.StateDir = s.cfg.StateDir.String() // pathhide.go: the owner's only
	}
	writeJSON(w, http.StatusOK, h)
}

// withSession resolves {ref} (an id or a name) once, for every handler that
// targets a session.
func (s *Server) withSession(fn func(http.ResponseWriter, *http.Request, store.Session, *session.Host)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ref := r.PathValue("ref")
		if !validRef(ref) {
			writeError(w, http.StatusNotFound, "no session %q (see `termkeep ls`)", ref)
			return
		}
		var sess store.Session
		var err error
		// ?workspace= looks a name up in that workspace alone, as a
		// client scoped to it names sessions.
		if ws, in := r.URL.Query()["workspace"]; in {
			sess, err = s.store.ResolveIn(r.Context(), ws[0], ref)
		} else {
			sess, err = s.store.Resolve(r.Context(), ref)
		}
		var amb *store.AmbiguousError
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, "no session %q (see `termkeep ls`)", ref)
			return
		}
		if errors.As(err, &amb) {
			writeError(w, http.StatusConflict, "%s (`termkeep ls` shows them)", amb.Error())
			return
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, "%v", err)
			return
		}
		h := s.host(sess.ID)
		// A session the principal may not see is answered as one that
		// does not exist.
		if h == nil || !principalOf(r.Context()).sees(sess) {
			writeError(w, http.StatusNotFound, "no session %q (see `termkeep ls`)", ref)
			return
		}
		fn(w, r, sess, h)
	}
}

func (s *Server) view(sess store.Session, h *session.Host) api.Session {
	sess = s.withEnd(sess, h) // registry.go
	out := api.Session{
		ID: sess.ID, Name: sess.Name, State: string(sess.State), ExitCode: sess.ExitCode, Reason: sess.Reason,
		Command: sess.Command, Cwd: sess.Cwd, Workspace: sess.Workspace, Cols: sess.Cols, Rows: sess.Rows,
		Owner: sess.Owner, CreatedAt: sess.CreatedAt, EndedAt: sess.EndedAt,
	}
	if out.Command == nil {
		out.Command = []string{}
	}
	// Every session is created with a command and a directory: a row
	// without is one adopted from a directory whose meta.json was lost.
	if len(sess.Command) == 0 {
		out.Unknown = append(out.Unknown, "command")
	}
	if sess.Cwd == "" {
		out.Unknown = append(out.Unknown, "cwd")
	}
	if sess.State == store.StateRunning && sess.Pid > 0 {
		pid := sess.Pid
		out.Pid = &pid
	}
	out.SizePolicy = sess.SizePolicy
	out.RestoreCommand, out.AutoRestore, out.ShellIntegration = sess.RestoreCommand, sess.AutoRestore, sess.ShellIntegration
	out.Agent, out.AgentConversation = sess.Agent, sess.AgentConversation
	if h != nil {
		out.Viewers = len(h.Viewers().Viewers)
		out.Resyncs = h.Resyncs()
		info := h.Info()
		out.End = info.End
		if e := h.Exit(); e != nil && e.End > out.End {
			out.End = e.End
		}
		if sess.State == store.StateRunning && info.Cols > 0 {
			out.Cols, out.Rows = int(info.Cols), int(info.Rows)
		}
		if st := info.LogStopped; st != nil {
			out.LogStopped = &api.LogStop{At: st.At, Reason: st.Reason}
		}
		if l := info.Lingering; l != nil && sess.State == store.StateRunning {
			out.Lingering = &api.Lingering{ExitCode: l.ExitCode, Signal: l.Signal, Until: l.Until}
			out.Pid = nil // the child is gone; what holds its terminal is not it
		}
		if since := info.UnresponsiveSince; !since.IsZero() && sess.State == store.StateRunning {
			out.Unresponsive, out.UnresponsiveSince = true, &since
		}
		if sess.State == store.StateRunning {
			out.Shell = shellView(h.Shell())
			out.HolderProtocol = info.HolderProtocol
			out.InputMode = &api.InputMode{}
			if m := info.TermMode; m != nil {
				*out.InputMode = api.InputMode{Known: true, Echo: m.Echo, Canonical: m.Canonical}
			}
		}
	}
	// From the segment files' names alone: a list of many sessions opens no log.
	if first, err := outlog.FirstOffset(filepath.Join(s.cfg.StateDir.Session(sess.ID), sessiondir.LogDir)); err == nil {
		out.First = min(first, out.End)
	}
	out.QuietSince = s.quietSince(sess, h)                   // quiet.go
	out.Activity = s.activity(context.Background(), sess, h) // readiness.go
	if sess.State == store.StateInterrupted {
		// Read from meta.json: only for interrupted sessions, which are few.
		d := restorepolicy.Decide(s.restoreRecord(sess, false), s.boot, restorepolicy.All) // boot.go
		out.Cause, out.CauseText, out.Restorable = string(d.Cause), d.Cause.Text(), d.Restore
	}
	return out
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	all, err := s.store.Sessions(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	ws, byWorkspace := r.URL.Query()["workspace"]
	p := principalOf(r.Context())
	out := make([]api.Session, 0, len(all))
	for _, sess := range all {
		if (byWorkspace && sess.Workspace != ws[0]) || !p.sees(sess) {
			continue
		}
		out = append(out, s.view(sess, s.host(sess.ID)))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	writeJSON(w, http.StatusOK, s.view(sess, h))
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	var req api.CreateRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	// The unix socket is the owner's own processes: they pass their
	// environment on (childenv.go).
	sess, status, err := s.create(r.Context(), req, envCaller)
	if err != nil {
		writeError(w, status, "%v", err)
		return
	}
	writeJSON(w, http.StatusCreated, s.view(sess, s.host(sess.ID)))
}

// create starts a session: it claims the name in the registry, starts the
// holder, and connects the session host from offset 0. policy says how the
// child's environment is made (childenv.go), now and on every restore.
func (s *Server) create(ctx context.Context, req api.CreateRequest, policy envPolicy) (_ store.Session, status int, err error) {
	defer func() { status, err = s.unavailable(status, err) }() // registry.go: 503 for the registry, the limits
	if err := checkName(req.Name); err != nil {
		return store.Session{}, http.StatusBadRequest, err
	}
	if err := s.nameIsNoID(ctx, req.Name, ""); err != nil {
		return store.Session{}, http.StatusConflict, err
	}
	if _, err := sizepolicy.Parse(req.SizePolicy); err != nil {
		return store.Session{}, http.StatusBadRequest, err
	}
	linger, err := parseLinger(req.Linger) // restore.go
	if err != nil {
		return store.Session{}, http.StatusBadRequest, err
	}
	if req.Agent != "" {
		if _, err := agents.Lookup(req.Agent); err != nil {
			return store.Session{}, http.StatusBadRequest, err
		}
	}
	if req.AgentConversation != "" {
		if req.Agent == "" {
			return store.Session{}, http.StatusBadRequest, errors.New("agent_conversation needs agent: a conversation id belongs to an agent's session")
		}
		if err := agents.CheckConversation(req.AgentConversation); err != nil {
			return store.Session{}, http.StatusBadRequest, err
		}
	}
	if req.Cols == 0 && req.Rows == 0 {
		req.Cols, req.Rows = 80, 24
	}
	if req.Cols < 1 || req.Rows < 1 || req.Cols > wire.MaxDim || req.Rows > wire.MaxDim {
		return store.Session{}, http.StatusBadRequest, fmt.Errorf("size %dx%d is out of range (1..%d each)", req.Cols, req.Rows, wire.MaxDim)
	}
	if req.Cwd == "" {
		if home, err := os.UserHomeDir(); err == nil {
			req.Cwd = home
		} else {
			req.Cwd = "/"
		}
	}
	if !filepath.IsAbs(req.Cwd) {
		return store.Session{}, http.StatusBadRequest, fmt.Errorf("working directory %q is not an absolute path", req.Cwd)
	}
	if !isDir(req.Cwd) {
		return store.Session{}, http.StatusBadRequest, fmt.Errorf("working directory %s does not exist or is not a directory", req.Cwd)
	}
	if err := checkEnv(req.KeepEnv, req.Env, req.SetEnv); err != nil {
		return store.Session{}, http.StatusBadRequest, err
	}
	for _, kv := range req.SetEnv {
		if k, _, ok := splitEnv(kv); !ok || k == "" {
			return store.Session{}, http.StatusBadRequest, fmt.Errorf("--env %q is not KEY=VALUE", kv)
		}
	}
	explicit := req.SetEnv
	if policy == envLogin {
		// Nothing of the server's: what the request sends is all its own.
		explicit = mergeEnv(req.Env, req.SetEnv)
	}
	id := newID()
	env := childEnv(policy, s.login, req.Env, nil, explicit, id)
	command := req.Command
	if len(command) == 0 {
		sh := envValue(env, "SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		command = []string{sh}
	}

	// The session belongs to whoever asks: the owner on the unix socket,
	// a user through its token on the TCP listener.
	owner := principalOf(ctx).user
	if owner == "" {
		return store.Session{}, http.StatusForbidden, errors.New("this request acts as no user and cannot create sessions")
	}
	if err := roomForSession(); err != nil { // rlimit.go
		return store.Session{}, http.StatusServiceUnavailable, err
	}
	if status, err := s.underQuota(ctx, owner); err != nil {
		return store.Session{}, status, err
	}
	if req.Workspace != "" {
		if status, err := s.joinWorkspace(ctx, req.Workspace, req.Cwd); err != nil {
			return store.Session{}, status, err
		}
	}
	sess := store.Session{
		ID: id, Name: req.Name, Workspace: req.Workspace, Command: command, Cwd: req.Cwd,
		Cols: req.Cols, Rows: req.Rows, Owner: owner, State: store.StateRunning,
		SizePolicy: req.SizePolicy, RestoreCommand: req.RestoreCommand, AutoRestore: req.AutoRestore,
		ShellIntegration: !req.NoShellIntegration, EnvPolicy: string(policy),
		Agent: req.Agent, AgentConversation: req.AgentConversation,
	}
	if status, err := s.claimSession(ctx, sess); err != nil { // limits.go
		return sess, status, err
	}
	dir := s.cfg.StateDir.Session(id)
	fail := func(status int, err error) (store.Session, int, error) {
		s.store.Delete(context.Background(), id)
		os.RemoveAll(dir)
		return sess, status, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(http.StatusInternalServerError, fmt.Errorf("create session directory: %w", err))
	}
	proc, _, err := s.start(sess, launch{
		command: command, cwd: req.Cwd, env: env, keepEnv: keepEnv(env, append(req.SetEnv, req.KeepEnv...)), linger: linger,
	}, func(pid, holderPid int) error {
		start := time.Now()
		err := s.store.SetPids(ctx, id, pid, holderPid)
		s.metrics.observeWrite("pids", start, err)
		return err
	})
	if err != nil {
		return fail(http.StatusBadRequest, fmt.Errorf("cannot start session: %w", err))
	}
	sess.Pid, sess.HolderPid = proc.Pid, proc.HolderPid
	got, err := s.store.Session(ctx, id)
	if err == nil {
		sess = got
	}
	s.log.Info("session created", "session", id, "name", req.Name, "command", command, "pid", proc.Pid)
	s.events.emit(store.EventSessionCreated, id, map[string]any{"name": req.Name, "command": command, "cwd": req.Cwd, "pid": proc.Pid})
	return sess, http.StatusCreated, nil
}

func splitEnv(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return "", "", false
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return strconv.Itoa(os.Getuid())
}

// handleKill is POST …/sessions/{ref}/kill, on both listeners: it ends the
// session (SIGHUP, then SIGKILL after the grace period) and answers it once
// ended; it stays listed as closed. Ending an ended session succeeds.
func (s *Server) handleKill(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	forced, err := s.endSession(h) // kill.go
	if err != nil {
		writeError(w, http.StatusGatewayTimeout, "%v", err)
		return
	}
	got, err := s.store.Session(r.Context(), sess.ID)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	out := s.view(got, h)
	out.Forced = forced
	writeJSON(w, http.StatusOK, out)
}

// handleRemove is DELETE …/sessions/{ref}[?force=1], on both listeners: it
// removes an ended session and its data; a running one only with force,
// which ends it first.
func (s *Server) handleRemove(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	force, err := queryBool(r, "force", false)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if status, err := s.remove(r.Context(), sess, h, force); err != nil {
		writeError(w, status, "%v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// remove deletes an ended session and its data; with force it ends a
// running one first. On failure it returns the HTTP status to answer.
func (s *Server) remove(ctx context.Context, sess store.Session, h *session.Host, force bool) (int, error) {
	if h.Exit() == nil {
		if !force {
			return http.StatusConflict, fmt.Errorf("session %s is running; kill it first or remove it with --force", ref(sess))
		}
		if err := s.kill(h); err != nil {
			return http.StatusGatewayTimeout, err
		}
	}
	return s.discard(ctx, sess, h, store.EventSessionRemoved, map[string]any{"name": sess.Name})
}

// discard deletes sess, which has ended, and its data, and emits event
// with detail: for `termkeep rm` and for pruning (prune.go). h may be nil.
func (s *Server) discard(ctx context.Context, sess store.Session, h *session.Host, event string, detail map[string]any) (int, error) {
	s.mu.Lock()
	delete(s.hosts, sess.ID)
	s.mu.Unlock()
	if h != nil {
		h.Close()
	}
	s.replay.indexes.Forget(sess.ID)
	if err := s.store.Delete(ctx, sess.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return http.StatusInternalServerError, err
	}
	s.events.emit(event, sess.ID, detail)
	if err := shellinit.Forget(filepath.Join(s.cfg.StateDir.Session(sess.ID), sessiondir.HistoryFile), os.Environ()); err != nil {
		s.log.Warn("remove the session's fish history", "session", sess.ID, "err", err)
	}
	s.holderGone(sess.ID)
	if err := os.RemoveAll(s.cfg.StateDir.Session(sess.ID)); err != nil {
		return http.StatusInternalServerError, fmt.Errorf("remove session data: %v", err)
	}
	return 0, nil
}

// nameIsNoID refuses a name that is another session's id (self: the
// session being renamed): by its name, that session could not be reached.
func (s *Server) nameIsNoID(ctx context.Context, name, self string) error {
	if name == "" || name == self {
		return nil
	}
	if other, err := s.store.Session(ctx, name); err == nil {
		return fmt.Errorf("session name %q is the id of session %s; pick another name", name, ref(other))
	}
	return nil
}

func ref(sess store.Session) string {
	if sess.Name != "" {
		return sess.Name
	}
	return sess.ID
}

func (s *Server) handleInput(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	if e := h.Exit(); e != nil {
		writeError(w, http.StatusConflict, "%s", endedMessage(sess, e))
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 16<<20+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "read input: %v", err)
		return
	}
	if len(data) > 16<<20 {
		writeError(w, http.StatusRequestEntityTooLarge, "input larger than 16 MiB")
		return
	}
	if err := h.Input(data); err != nil {
		if errors.Is(err, session.ErrEnded) {
			writeError(w, http.StatusConflict, "%s", endedMessage(sess, h.Exit()))
			return
		}
		writeError(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func endedMessage(sess store.Session, e *wire.Exit) string {
	if e == nil {
		return fmt.Sprintf("session %s has ended", ref(sess))
	}
	hint := " (termkeep restore " + ref(sess) + " starts it again)"
	switch {
	case sess.State == store.StatePaused:
		return fmt.Sprintf("session %s is paused: %s%s", ref(sess), sess.Reason, hint)
	case e.State == "interrupted":
		return fmt.Sprintf("session %s was interrupted: %s%s", ref(sess), e.Reason, hint)
	case e.State == "closed" && e.Reason != "":
		return fmt.Sprintf("session %s was closed: %s%s", ref(sess), e.Reason, hint)
	case e.ExitCode != nil:
		return fmt.Sprintf("session %s has %s (status %d)%s", ref(sess), e.State, *e.ExitCode, hint)
	}
	return fmt.Sprintf("session %s has %s%s", ref(sess), e.State, hint)
}

// handleOutput streams the logged bytes from ?from= (default: the oldest
// retained) up to the session's end at the time of the request.
func (s *Server) handleOutput(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	l, err := outlog.Open(filepath.Join(s.cfg.StateDir.Session(sess.ID), sessiondir.LogDir), outlog.Options{ReadOnly: true})
	if err != nil {
		writeError(w, http.StatusInternalServerError, "open output log: %v", err)
		return
	}
	defer l.Close()
	first, end := l.First(), l.End()
	from := first
	if q := r.URL.Query().Get("from"); q != "" {
		v, err := strconv.ParseUint(q, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "--from %q is not an offset", q)
			return
		}
		from = v
	}
	if from < first {
		writeError(w, http.StatusGone, "offset %d is no longer retained; the oldest retained offset is %d", from, first)
		return
	}
	if from > end {
		writeError(w, http.StatusRequestedRangeNotSatisfiable, "offset %d is beyond the end of the output (%d)", from, end)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set(api.HeaderFirst, strconv.FormatUint(first, 10))
	w.Header().Set(api.HeaderEnd, strconv.FormatUint(end, 10))
	// The length is known only once the gaps are (bytes never logged): the
	// body is chunked, and the gaps follow in a trailer.
	w.Header().Set("Trailer", api.HeaderGaps)
	w.WriteHeader(http.StatusOK)
	cur := l.Cursor(from)
	defer cur.Close()
	buf := make([]byte, 256<<10)
	var gaps []string
	defer func() {
		if len(gaps) > 0 {
			w.Header().Set(api.HeaderGaps, strings.Join(gaps, ", "))
		}
	}()
	for cur.Offset() < end {
		off := cur.Offset()
		n, err := cur.Read(buf[:min(uint64(len(buf)), end-off)])
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			continue
		}
		var gap *outlog.GapError
		if errors.As(err, &gap) {
			gaps = append(gaps, api.FormatGap(gap.Start, gap.End, gap.Reason))
			continue
		}
		if errors.Is(err, outlog.ErrCorrupt) {
			// Skipped as the screen model and viewers skip it: to where
			// the log's damage map says the damaged stretch ends.
			next := min(max(l.SkipCorrupt(off), off+1), end)
			s.log.Warn("output stream skips damaged bytes", "session", sess.ID, "from", off, "to", next, "err", err)
			gaps = append(gaps, api.FormatGap(off, next, api.GapDamaged))
			cur.Seek(next)
			continue
		}
		if err != nil {
			// Compacted under us or a read error: the client sees a short
			// body against Content-Length and reports it.
			s.log.Warn("output stream cut", "session", sess.ID, "offset", cur.Offset(), "err", err)
			return
		}
	}
}

// handleAttach upgrades the connection to a wire stream and serves it as a
// viewer of the session.
func (s *Server) handleAttach(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	if r.Header.Get("Upgrade") != api.UpgradeProto {
		writeError(w, http.StatusUpgradeRequired, "attach needs Upgrade: %s", api.UpgradeProto)
		return
	}
	if err := roomForViewer(); err != nil { // viewerroom.go
		writeError(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		writeError(w, http.StatusInternalServerError, "connection cannot be upgraded")
		return
	}
	// The frames are read and written raw (hijackRaw): a keystroke
	// through this connection then wakes no thread of the server but the
	// one that reads it.
	conn, brw, err := hijackRaw(hj)
	if err != nil {
		return
	}
	// attach on this machine, as the server's own user, may hand over its
	// terminal with a lane frame (session/viewer_lane.go): its socket is
	// read with recvmsg, which keeps the descriptor.
	var src io.Reader = conn
	fds, local, pid := localFDs(conn)
	if fds != nil {
		defer fds.Close()
		src = fds
	}
	// The HTTP server may have read the first frames: they come first.
	b, _ := brw.Reader.Peek(brw.Reader.Buffered())
	brw.Reader.Reset(io.MultiReader(bytes.NewReader(bytes.Clone(b)), src))
	fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: %s\r\nConnection: Upgrade\r\n\r\n", api.UpgradeProto)
	if err := brw.Flush(); err != nil {
		conn.Close()
		return
	}
	rw := &hijacked{Reader: brw.Reader, Conn: conn, fds: fds}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var buf []byte
	f, err := wire.ReadFrame(rw, &buf)
	ww := wire.NewWriter(conn)
	if err != nil || f.Type != wire.TypeHello {
		ww.Error(wire.CodeMalformed, "expected a hello frame")
		conn.Close()
		return
	}
	var hello wire.Hello
	if err := wire.ParseJSON(f.Payload, &hello); err != nil {
		ww.Error(wire.CodeMalformed, err.Error())
		conn.Close()
		return
	}
	if hello.Version < wire.MinVersion {
		ww.Error(wire.CodeVersion, fmt.Sprintf("protocol version %d is too old; this server speaks %d..%d", hello.Version, wire.MinVersion, wire.Version))
		conn.Close()
		return
	}
	conn.SetReadDeadline(time.Time{})
	started, detached := s.viewerArrival(sess, hello, wire.ViewerCLI, hello.ReadOnly, "")
	defer detached()
	opts := s.viewerOptions(sess, wire.ViewerCLI, hello.ReadOnly)
	opts.Local, opts.Pid = local, pid
	opts.Started = started
	h.ServeViewer(rw, hello, opts)
}

// hijacked reads through the HTTP server's buffer (which may already hold
// the client's first frames) and writes straight to the connection.
type hijacked struct {
	*bufio.Reader
	net.Conn
	fds *fdpass.Reader // nil: the connection carries no descriptors
}

func (h *hijacked) Read(p []byte) (int, error) { return h.Reader.Read(p) }

func (s *Server) handleShutdown(w http.ResponseWriter, r *http.Request) {
	var req api.ShutdownRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &req); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	}
	if req.Sessions {
		s.killAll()
	}
	w.WriteHeader(http.StatusNoContent)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	s.Shutdown(false) // Serve stops once this answer has gone
}

// handleScreen renders the session's screen from the screen model: plain
// text, or with SGR colors (?ansi=1), with up to ?scrollback=N lines above it.
func (s *Server) handleScreen(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	q := r.URL.Query()
	sb := 0
	if v := q.Get("scrollback"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "--scrollback %q is not a number of lines", v)
			return
		}
		sb = n
	}
	text, err := h.Screen(r.Context(), q.Get("ansi") != "", sb)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "render the screen of %s: %v", ref(sess), err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, text)
}

// shellView is the API's view of a shell's state.
func shellView(st shellmark.Status) *api.Shell {
	v := &api.Shell{State: string(st.State)}
	if !st.Since.IsZero() {
		since := st.Since
		v.Since = &since
	}
	if st.Running != nil {
		v.Command = st.Running.Line
	}
	if l := st.Last; l != nil {
		v.Last = &api.ShellCommand{Command: l.Line, Status: l.Status, EndedAt: l.At, HasOutput: l.HasOutput}
		if l.HasOutput {
			v.Last.OutputStart, v.Last.OutputEnd = l.Output, l.End
		}
	}
	return v
}
