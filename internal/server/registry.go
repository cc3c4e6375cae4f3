package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/session"
	"termkeep/internal/sessiondir"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// What the server does when the registry fails for a reason outside
// termkeep (another process locks it, it is read-only, it is damaged):
//
//   - At start, New returns a *RegistryError, whose message says what is
//     wrong and what fixes it, and logs the same sentence. It fails before
//     it looks at a single session, so no holder is signalled and no
//     session directory is touched: the sessions run on until a server
//     can use the registry again.
//   - While it runs, a create or a restore fails with 503 and the sentence
//     (the session is claimed in the registry before anything is started,
//     so nothing is left behind); running sessions, their holders and their
//     viewers go on, since none of that needs a write. For registryRetry
//     after a refused event no event is tried (eventHub.emit), and a
//     session's end the registry refused is written again (endRetry) until
//     it is taken; meanwhile the session is shown ended as its host knows
//     it (withEnd).

// registryRetry is how long the server leaves a registry that refused a
// write (locked, read-only or on a full disk) alone before it tries to
// record events again, and by default the longest wait between writes of
// a refused session end (Config.RegistryRetry).
const registryRetry = 10 * time.Second

// endRetry decides when a session's end the registry refused is written
// again: only a refusal that time can lift (another process's lock, a
// read-only file system, a full disk), after a wait that starts at an
// eighth of max and doubles up to max, for as long as the server runs.
// A full disk that is freed is then noticed within max.
type endRetry struct{ max time.Duration }

// next returns when to write the end again after its failures-th refusal
// (1 for the first), at now, with err, and whether to.
func (p endRetry) next(err error, failures int, now time.Time) (time.Time, bool) {
	if !errors.Is(err, store.ErrLocked) && !errors.Is(err, store.ErrReadOnly) && !errors.Is(err, store.ErrFull) {
		return time.Time{}, false
	}
	d := max(p.max/8, time.Millisecond)
	for i := 1; i < failures && d < p.max; i++ {
		d *= 2
	}
	return now.Add(min(d, p.max)), true
}

// retryEnd writes session id's end e again when endRetry says so, after
// its failures-th refusal with err, unless the server has stopped by then.
func (s *Server) retryEnd(id string, e wire.Exit, err error, failures int) {
	now := s.cfg.Now()
	at, ok := s.endRetry.next(err, failures, now)
	if !ok {
		return
	}
	time.AfterFunc(at.Sub(now), func() {
		select {
		case <-s.done:
		default:
			s.recordEnd(id, e)
		}
	})
}

// withEnd is sess as it stands when the registry has not taken its end
// yet (a full disk refused the write, and retryEnd tries again): running
// in the registry, ended for its host, which knows it from its holder,
// and at the time the holder's status record gives, which a full disk
// does not stop it from writing.
func (s *Server) withEnd(sess store.Session, h *session.Host) store.Session {
	if sess.State != store.StateRunning || h == nil {
		return sess
	}
	e := h.Exit()
	if e == nil {
		return sess
	}
	sess.State, sess.ExitCode, sess.Reason, sess.Pid = endState(*e), e.ExitCode, e.Reason, 0
	if st, err := sessiondir.ReadStatus(s.cfg.StateDir.Session(sess.ID)); err == nil && st.EndedAt != nil {
		sess.EndedAt = st.EndedAt
	}
	return sess
}

// RegistryError is a registry the server cannot use, or cannot write, for
// a reason outside termkeep. Its message is one sentence a user can act on.
type RegistryError struct {
	Path string
	// Kind is store.ErrLocked, store.ErrReadOnly or store.ErrDamaged.
	Kind error
	// Err is what the store or the system said.
	Err error
	msg string
}

func (e *RegistryError) Error() string { return e.msg }
func (e *RegistryError) Unwrap() error { return e.Err }

// registryError explains err, a failure of the registry at path, when it is
// one of the faults a user must fix, and returns nil otherwise. atStart
// says the server is starting: the fix then ends with starting it again
// rather than trying again.
func registryError(path string, err error, atStart bool) *RegistryError {
	var kind error
	for _, k := range []error{store.ErrLocked, store.ErrReadOnly, store.ErrDamaged} {
		if errors.Is(err, k) {
			kind = k
			break
		}
	}
	if kind == nil {
		return nil
	}
	again, meanwhile := "start termkeep again", ""
	if !atStart {
		again, meanwhile = "try again", ", so no session can be created or restored now (running sessions go on)"
	}
	var msg string
	switch kind {
	case store.ErrLocked:
		msg = fmt.Sprintf("the registry %s is locked by another process (%s)%s; stop that process or end its transaction, then %s",
			path, lockHolders(path), meanwhile, again)
	case store.ErrReadOnly:
		msg = fmt.Sprintf("the registry %s is read-only: %s%s; %s", path, readOnlyWhy(path), meanwhile, readOnlyFix(path, again))
	case store.ErrDamaged:
		if atStart {
			msg = fmt.Sprintf(`the registry %s is damaged: run "termkeep doctor --rebuild" to rebuild it from the sessions' meta.json files (live sessions are kept), then start termkeep again`,
				path)
		} else {
			msg = fmt.Sprintf(`the registry %s is damaged%s: stop the server (termkeep shutdown), run "termkeep doctor --rebuild" to rebuild it from the sessions' meta.json files (live sessions are kept), and start it again`,
				path, meanwhile)
		}
	}
	return &RegistryError{Path: path, Kind: kind, Err: err, msg: msg}
}

// stateDirReadOnly is the RegistryError of a state directory this process
// cannot write at all (checked before the lock file, which comes first).
func stateDirReadOnly(dir, db string) *RegistryError {
	err := unix.Access(dir, unix.W_OK)
	if !errors.Is(err, unix.EROFS) && !errors.Is(err, unix.EACCES) {
		return nil
	}
	err = &os.PathError{Op: "access", Path: dir, Err: err}
	return &RegistryError{Path: db, Kind: store.ErrReadOnly, Err: err,
		msg: fmt.Sprintf("the registry %s is read-only: %s; %s", db, readOnlyWhy(db), readOnlyFix(db, "start termkeep again"))}
}

// readOnlyWhy says why path cannot be written: its file system, or its
// permissions.
func readOnlyWhy(path string) string {
	dir := filepath.Dir(path)
	for _, p := range []string{dir, path} {
		if errors.Is(unix.Access(p, unix.W_OK), unix.EROFS) {
			return dir + " is on a read-only file system"
		}
	}
	return fmt.Sprintf("this user (uid %d) may not write it or %s", os.Getuid(), dir)
}

func readOnlyFix(path, again string) string {
	dir := filepath.Dir(path)
	if errors.Is(unix.Access(dir, unix.W_OK), unix.EROFS) {
		return fmt.Sprintf("remount it read-write (or use another state directory: --state-dir), then %s", again)
	}
	return fmt.Sprintf("give the file back to uid %d with mode 0600 and %s with mode 0700 (chown, chmod), then %s", os.Getuid(), dir, again)
}

// lockHolders names the processes other than this one that hold a lock on
// the registry or its -wal and -shm files, writers first, as far as
// /proc/locks (Linux, POSIX locks: what SQLite takes) tells.
func lockHolders(path string) string {
	const unknown = "another termkeep server, or a program such as the sqlite3 shell in a transaction?"
	type file struct {
		major, minor uint64
		ino          uint64
	}
	files := map[file]bool{}
	for _, sfx := range []string{"", "-wal", "-shm"} {
		var st unix.Stat_t
		if unix.Stat(path+sfx, &st) == nil {
			files[file{uint64(unix.Major(uint64(st.Dev))), uint64(unix.Minor(uint64(st.Dev))), uint64(st.Ino)}] = true
		}
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return unknown
	}
	var writers, readers []int
	seen := map[int]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		// 1: POSIX  ADVISORY  WRITE 30250 fe:00:10162321 120 120
		// 2: -> POSIX ... (a waiter, not a holder)
		f := strings.Fields(line)
		if len(f) < 6 || f[1] == "->" {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil || pid <= 0 || pid == os.Getpid() || seen[pid] {
			continue
		}
		id := strings.Split(f[5], ":")
		if len(id) != 3 {
			continue
		}
		major, err1 := strconv.ParseUint(id[0], 16, 32)
		minor, err2 := strconv.ParseUint(id[1], 16, 32)
		ino, err3 := strconv.ParseUint(id[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || !files[file{major, minor, ino}] {
			continue
		}
		seen[pid] = true
		if f[3] == "WRITE" {
			writers = append(writers, pid)
		} else {
			readers = append(readers, pid)
		}
	}
	pids := append(writers, readers...)
	if len(pids) == 0 {
		return unknown
	}
	var names []string
	for _, pid := range pids[:min(len(pids), 3)] {
		n := "pid " + strconv.Itoa(pid)
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
			n += ", " + strings.TrimSpace(string(comm))
		}
		names = append(names, n)
	}
	return strings.Join(names, "; ")
}

// unavailable turns a failure of a create or a restore that the server's
// surroundings caused, not the request (the registry, a read-only state
// directory, a process limit: rlimit.go), into 503 Service Unavailable with
// the sentence that says how to fix it, and logs that sentence. Other
// failures pass unchanged.
func (s *Server) unavailable(status int, err error) (int, error) {
	if err == nil {
		return status, nil
	}
	var out error
	if re := registryError(s.cfg.StateDir.DB(), err, false); re != nil {
		out = re
	} else if le := limitError(err); le != nil {
		out = le
	} else if errors.Is(err, unix.EROFS) {
		out = fmt.Errorf("the state directory %s is read-only (%v), so no session can be created or restored now (running sessions go on); "+
			"remount it read-write, then try again", s.cfg.StateDir, err)
	} else {
		return status, err
	}
	if err == out {
		s.log.Error(out.Error())
	} else {
		s.log.Error(out.Error(), "err", err)
	}
	return http.StatusServiceUnavailable, out
}

// registryAtStart explains a failure of the registry while the server
// starts and logs the sentence; any other error passes unchanged.
func registryAtStart(log *slog.Logger, db string, err error) error {
	if re := registryError(db, err, true); re != nil {
		log.Error(re.Error(), "err", err)
		return re
	}
	return err
}

// reportGeneration says what the store found comparing the registry's
// generation with the one kept beside it: a rollback in the log at every
// start until termkeep doctor --rebuild resolves it, and in an event the
// first time; a generation file that cannot be read as a warning.
func (s *Server) reportGeneration() {
	g := s.store.Generation()
	db := s.cfg.StateDir.DB()
	if g.Problem != "" {
		s.log.Warn("the registry's generation file cannot be read, so a rollback of the registry before now cannot be told; it is written again",
			"file", db+store.GenerationSuffix, "problem", g.Problem)
	}
	r := g.Rollback
	if r == nil {
		return
	}
	s.log.Error("the registry " + db + " " + r.Describe() + `; session directories it lost are adopted from their meta.json; run "termkeep doctor --rebuild" (with the server stopped) to check every session against its directory and clear this, then make again any workspace, user or token that is missing`)
	if g.New {
		s.events.emit(store.EventRegistryRolledBack, "", map[string]any{"from": r.From, "to": r.To, "lost": r.Lost()})
	}
}

// reconcileName settles a live session whose name in the registry and in
// its holder's meta.json differ. A rename while no server was connected
// leaves meta.json behind, and the holder is told the registry's name. But
// while a rollback stands the registry is the side behind (a rename it
// lost), and takes the name from meta.json instead, where a holder that
// knows the name frame kept it; sending the old name would lose the new
// one there too.
func (s *Server) reconcileName(ctx context.Context, h *session.Host, sess store.Session, rolledBack bool) {
	m, err := sessiondir.ReadMeta(s.cfg.StateDir.Session(sess.ID))
	if err != nil || m.Name == sess.Name {
		return
	}
	if !rolledBack || !wire.HolderAccepts(m.Version, wire.TypeName) {
		h.SetName(sess.Name)
		return
	}
	switch err := s.store.Rename(ctx, sess.ID, m.Name); {
	case err == nil:
		s.log.Warn("the registry was rolled back: the session's name is taken from its meta.json", "session", sess.ID, "registry", sess.Name, "name", m.Name)
		s.events.emit(store.EventSessionRenamed, sess.ID, map[string]any{"from": sess.Name, "to": m.Name, "why": "registry_rolled_back"})
	default:
		s.log.Warn("the registry was rolled back, and the session's name in its meta.json cannot be taken back", "session", sess.ID, "registry", sess.Name, "name", m.Name, "err", err)
	}
}

// settingsOf are the session's settings as meta.json keeps them.
func settingsOf(sess store.Session) sessiondir.Settings {
	return sessiondir.Settings{AutoRestore: sess.AutoRestore, RestoreCommand: sess.RestoreCommand,
		SizePolicy: sess.SizePolicy, NoShellIntegration: !sess.ShellIntegration}
}

// keepSettings writes an ended session's settings into its meta.json when
// it lacks them: a holder from before meta.json kept them wrote it, and a
// registry rebuilt from it would lose them. Its holder is gone, so the
// server writes meta.json itself, holding the session's lock
// (sessiondir.UpdateMeta); a holder that runs again is left alone.
func (s *Server) keepSettings(sess store.Session) {
	want := settingsOf(sess)
	err := sessiondir.UpdateMeta(s.cfg.StateDir.Session(sess.ID), func(m *sessiondir.Meta) bool {
		if m.ID != sess.ID || m.Settings == want {
			return false
		}
		m.Settings = want
		return true
	})
	if err != nil && !errors.Is(err, sessiondir.ErrHolderRuns) && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("cannot keep the session's settings in its meta.json; a registry rebuilt from it would lose them", "session", sess.ID, "err", err)
	}
}
