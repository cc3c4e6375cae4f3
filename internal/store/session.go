package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// State is where a session is in its life. States only move forward, from
// running to paused or to one of the ended states; Restart is the one way
// back to running.
type State string

const (
	StateRunning     State = "running"
	StateExited      State = "exited"      // the child ended, status known
	StateInterrupted State = "interrupted" // holder or machine died, no status
	StateClosed      State = "closed"      // ended on purpose (kill, policy)
	StatePaused      State = "paused"      // its workspace was paused: ended on purpose, to be resumed
)

// Ended reports whether s is a final state: exited, interrupted or closed.
func (s State) Ended() bool {
	return s == StateExited || s == StateInterrupted || s == StateClosed
}

func (s State) valid() bool {
	return s == StateRunning || s == StatePaused || s.Ended()
}

var (
	ErrNotFound   = errors.New("store: session not found")
	ErrNameTaken  = errors.New("store: session name already in use")
	ErrNotRunning = errors.New("store: session is not running")
)

// Session is one row of the registry. Values are copies: changing one changes
// nothing stored.
type Session struct {
	ID        string
	Name      string // "" = no name (stored NULL)
	Workspace string
	Command   []string
	Cwd       string
	Cols      int
	Rows      int
	Owner     string
	State     State
	ExitCode  *int // set when the child's status is known
	Reason    string
	Pid       int // the child's pid; 0 = unknown or not running
	HolderPid int // 0 = unknown
	CreatedAt time.Time
	EndedAt   *time.Time // set once the session has ended
	UpdatedAt time.Time
	// SizePolicy is how the session's size follows its viewers ("latest",
	// "smallest"); "" means the server's default.
	SizePolicy string
	// RestoreCommand is the shell command line a restore runs instead of
	// Command ("" = Command again); AutoRestore has the server restore the
	// session by itself when it finds it interrupted; ShellIntegration is
	// whether a shell in it gets termkeep's integration.
	RestoreCommand   string
	AutoRestore      bool
	ShellIntegration bool
	// EnvPolicy is how the child's environment is made, on create and on
	// every restore (the server decides what the names mean; "" is a row
	// from before it was recorded).
	EnvPolicy string
	// Cause is why an interrupted session ended, when known (the server
	// decides what the names mean); "" otherwise.
	Cause string
	// Agent is the preset (internal/agents) the session was created with,
	// "" for any other command; AgentConversation is the conversation id
	// it was pinned to, "" when not pinned.
	Agent             string
	AgentConversation string
}

const sessionCols = `id, name, workspace, command, cwd, cols, "rows", owner, state,
	exit_code, reason, pid, holder_pid, created_at, ended_at, updated_at, size_policy,
	restore_command, auto_restore, shell_integration, env_policy, cause, agent, agent_conversation`

// CreateSession records a new session. A zero CreatedAt or UpdatedAt is set
// from the clock, an empty State means running, and an ended session without
// EndedAt gets the clock's time. It fails with ErrNameTaken if another session
// has sess.Name.
func (s *Store) CreateSession(ctx context.Context, sess Session) error {
	op := "create session " + sess.ID
	if sess.ID == "" {
		return wrap("create session", errors.New("empty session id"))
	}
	if sess.State == "" {
		sess.State = StateRunning
	}
	if !sess.State.valid() {
		return wrap(op, fmt.Errorf("unknown state %q", sess.State))
	}
	now := s.now()
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = now
	}
	if sess.UpdatedAt.IsZero() {
		sess.UpdatedAt = now
	}
	if sess.State.Ended() && sess.EndedAt == nil {
		sess.EndedAt = &now
	}
	cmd := sess.Command
	if cmd == nil {
		cmd = []string{}
	}
	cmdJSON, err := json.Marshal(cmd)
	if err != nil {
		return wrap(op, err)
	}
	var endedAt sql.NullString
	if sess.EndedAt != nil {
		endedAt = sql.NullString{String: formatTime(*sess.EndedAt), Valid: true}
	}
	err = s.sessions.write(func() error {
		_, err := s.db.ExecContext(ctx, `INSERT INTO sessions (`+sessionCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sess.ID, nullString(sess.Name), sess.Workspace, string(cmdJSON), sess.Cwd,
			sess.Cols, sess.Rows, sess.Owner, string(sess.State),
			nullIntPtr(sess.ExitCode), sess.Reason, nullInt(sess.Pid), nullInt(sess.HolderPid),
			formatTime(sess.CreatedAt), endedAt, formatTime(sess.UpdatedAt), sess.SizePolicy,
			sess.RestoreCommand, sess.AutoRestore, sess.ShellIntegration, sess.EnvPolicy, sess.Cause,
			sess.Agent, sess.AgentConversation)
		return err
	})
	switch {
	case isUnique(err, "sessions.name"):
		return wrap(op, ErrNameTaken)
	case isUnique(err, "sessions.id"):
		return wrap(op, errors.New("a session with this id already exists"))
	case err == nil:
		s.changed(ctx)
	}
	return wrap(op, err)
}

// Session returns the session with the given id, or ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	sess, err := s.cached(id, false, func() (Session, error) {
		return scanSession(s.db.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	})
	return sess, wrap("get session "+id, err)
}

// Resolve returns the session whose id is idOrName, else the one whose name is
// idOrName, else ErrNotFound. Both matches are exact. A name that sessions
// of several workspaces have is an *AmbiguousError.
func (s *Store) Resolve(ctx context.Context, idOrName string) (Session, error) {
	sess, err := s.cached(idOrName, true, func() (Session, error) {
		return s.resolve(ctx, idOrName, nil)
	})
	return sess, wrap("resolve session "+idOrName, err)
}

// ResolveIn is Resolve with names looked up in workspace ws alone: how a
// client scoped to a workspace names sessions. An id is any workspace's.
func (s *Store) ResolveIn(ctx context.Context, ws, idOrName string) (Session, error) {
	sess, err := s.cached(ws+"\x00"+idOrName, true, func() (Session, error) {
		return s.resolve(ctx, idOrName, &ws)
	})
	return sess, wrap("resolve session "+idOrName+" in workspace "+ws, err)
}

// resolve reads the session ref names: by id, else by name (in ws when
// given). One statement, so a concurrent rename cannot fall between two
// lookups. A name is unique within a workspace, so the rows are one per
// workspace that has it.
func (s *Store) resolve(ctx context.Context, ref string, ws *string) (Session, error) {
	q := `SELECT ` + sessionCols + ` FROM sessions WHERE id = ?1 OR name = ?1 ORDER BY id = ?1 DESC, workspace`
	args := []any{ref}
	if ws != nil {
		q = `SELECT ` + sessionCols + ` FROM sessions WHERE id = ?1 OR (name = ?1 AND workspace = ?2) ORDER BY id = ?1 DESC`
		args = append(args, *ws)
	}
	list, err := s.list(ctx, q, args...)
	switch {
	case err != nil:
		return Session{}, err
	case len(list) == 0:
		return Session{}, ErrNotFound
	case len(list) == 1 || list[0].ID == ref:
		return list[0], nil
	}
	amb := &AmbiguousError{Name: ref}
	for _, sess := range list {
		amb.Workspaces = append(amb.Workspaces, sess.Workspace)
	}
	return Session{}, amb
}

// AmbiguousError is a name that sessions of several workspaces have: the
// reference must be an id, or be looked up in a workspace (ResolveIn).
type AmbiguousError struct {
	Name       string
	Workspaces []string // "" is no workspace
}

func (e *AmbiguousError) Error() string {
	ws := make([]string, len(e.Workspaces))
	for i, w := range e.Workspaces {
		ws[i] = strconv.Quote(w)
		if w == "" {
			ws[i] = "no workspace"
		}
	}
	return fmt.Sprintf("sessions of %d workspaces (%s) are named %q: name the session by its id", len(ws), strings.Join(ws, ", "), e.Name)
}

// cached answers a lookup of ref from the session cache, else by read,
// whose answer it keeps.
func (s *Store) cached(ref string, byName bool, read func() (Session, error)) (Session, error) {
	sess, ok, epoch := s.sessions.lookup(ref, byName)
	if ok {
		if s.sessions.check {
			s.sessions.verify(ref, sess, epoch, read)
		}
		return sess, nil
	}
	sess, err := read()
	if err == nil {
		s.sessions.store(ref, sess, epoch)
	}
	return sess, err
}

// Sessions returns every session, oldest first (by CreatedAt, then ID). It
// returns an empty, non-nil slice when there are none.
func (s *Store) Sessions(ctx context.Context) ([]Session, error) {
	list, err := s.list(ctx, `SELECT `+sessionCols+` FROM sessions ORDER BY created_at, id`)
	return list, wrap("list sessions", err)
}

// SessionsInState returns the sessions in state st, ordered as Sessions.
func (s *Store) SessionsInState(ctx context.Context, st State) ([]Session, error) {
	list, err := s.list(ctx, `SELECT `+sessionCols+` FROM sessions WHERE state = ? ORDER BY created_at, id`, string(st))
	return list, wrap(fmt.Sprintf("list %s sessions", st), err)
}

func (s *Store) list(ctx context.Context, query string, args ...any) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// End moves a running session to the ended state st, once: it returns
// changed=false and no error when the session had already ended (the first
// ending wins, and its state, code and reason stay) or was paused (a pause
// is the end of its process, already recorded). It sets exit_code,
// reason and ended_at (clock) and clears pid; holder_pid is kept.
func (s *Store) End(ctx context.Context, id string, st State, exitCode *int, reason string) (changed bool, err error) {
	return s.EndCause(ctx, id, st, exitCode, reason, "")
}

// EndCause is End that also records why the session ended (Session.Cause).
func (s *Store) EndCause(ctx context.Context, id string, st State, exitCode *int, reason, cause string) (changed bool, err error) {
	op := "end session " + id
	if !st.Ended() {
		return false, wrap(op, fmt.Errorf("%q is not an ended state", st))
	}
	err = s.sessionsTx(ctx, func(tx *sql.Tx) error {
		cur, err := stateOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur != StateRunning {
			return nil
		}
		now := s.nowText()
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET state = ?, exit_code = ?, reason = ?, cause = ?,
			ended_at = ?, pid = NULL, updated_at = ? WHERE id = ?`,
			string(st), nullIntPtr(exitCode), reason, cause, now, now, id)
		changed = err == nil
		return err
	})
	if err != nil {
		return false, wrap(op, err)
	}
	return changed, nil
}

// Restart moves an ended (or paused) session back to running with the given
// pids, clearing exit_code, ended_at and reason. A session that is already
// running is an error: its processes are not replaced.
func (s *Store) Restart(ctx context.Context, id string, pid, holderPid int) error {
	return wrap("restart session "+id, s.sessionsTx(ctx, func(tx *sql.Tx) error {
		cur, err := stateOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur == StateRunning {
			return errors.New("session is already running")
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET state = ?, exit_code = NULL, reason = '', cause = '',
			ended_at = NULL, pid = ?, holder_pid = ?, updated_at = ? WHERE id = ?`,
			string(StateRunning), nullInt(pid), nullInt(holderPid), s.nowText(), id)
		return err
	}))
}

// SetCause records why an interrupted session ended, with the reason that
// says it in words, when the server learns it after the end was recorded
// (a session of an earlier boot found by the first server of this one).
// It changes nothing and returns changed false unless the session is
// interrupted with another cause or reason.
func (s *Store) SetCause(ctx context.Context, id, cause, reason string) (changed bool, err error) {
	var res sql.Result
	err = s.sessions.write(func() (err error) {
		res, err = s.db.ExecContext(ctx, `UPDATE sessions SET cause = ?, reason = ?, updated_at = ?
			WHERE id = ? AND state = ? AND (cause != ? OR reason != ?)`, cause, reason, s.nowText(), id, string(StateInterrupted), cause, reason)
		return err
	})
	if err != nil {
		return false, wrap("set cause of session "+id, err)
	}
	s.changed(ctx)
	n, err := res.RowsAffected()
	return n > 0, wrap("set cause of session "+id, err)
}

// SetPids records the pids of a running session's child and holder (0 =
// unknown). It fails with ErrNotRunning if the session is not running, so a
// late report cannot give an ended session a live pid.
func (s *Store) SetPids(ctx context.Context, id string, pid, holderPid int) error {
	return wrap("set pids of session "+id, s.sessionsTx(ctx, func(tx *sql.Tx) error {
		cur, err := stateOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur != StateRunning {
			return ErrNotRunning
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET pid = ?, holder_pid = ?, updated_at = ? WHERE id = ?`,
			nullInt(pid), nullInt(holderPid), s.nowText(), id)
		return err
	}))
}

// SetCwd records a session's working directory, in any state (the last one
// seen is where a restore starts).
func (s *Store) SetCwd(ctx context.Context, id, cwd string) error {
	return wrap("set cwd of session "+id, s.update(ctx,
		`UPDATE sessions SET cwd = ?, updated_at = ? WHERE id = ?`, cwd, s.nowText(), id))
}

// SetSizePolicy records a session's size policy ("" = the server's).
func (s *Store) SetSizePolicy(ctx context.Context, id, policy string) error {
	return wrap("set size policy of session "+id, s.update(ctx,
		`UPDATE sessions SET size_policy = ?, updated_at = ? WHERE id = ?`, policy, s.nowText(), id))
}

// SetSize records a session's terminal size, in any state.
func (s *Store) SetSize(ctx context.Context, id string, cols, rows int) error {
	return wrap("set size of session "+id, s.update(ctx,
		`UPDATE sessions SET cols = ?, "rows" = ?, updated_at = ? WHERE id = ?`, cols, rows, s.nowText(), id))
}

// Rename gives a session a new name; "" removes its name. It fails with
// ErrNameTaken if another session has the name.
func (s *Store) Rename(ctx context.Context, id, name string) error {
	err := s.update(ctx, `UPDATE sessions SET name = ?, updated_at = ? WHERE id = ?`,
		nullString(name), s.nowText(), id)
	if isUnique(err, "sessions.name") {
		err = ErrNameTaken
	}
	return wrap("rename session "+id, err)
}

// Delete removes a session's row, freeing its name. It fails with ErrNotFound
// if there is none. The session's files on disk are the caller's.
func (s *Store) Delete(ctx context.Context, id string) error {
	return wrap("delete session "+id, s.update(ctx, `DELETE FROM sessions WHERE id = ?`, id))
}

// update runs a statement on one session row; ErrNotFound if none matched.
func (s *Store) update(ctx context.Context, query string, args ...any) error {
	return s.sessions.write(func() error { return s.updateRow(ctx, ErrNotFound, query, args...) })
}

// sessionsTx is inTx for a transaction that writes session rows.
func (s *Store) sessionsTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.sessions.write(func() error { return s.inTx(ctx, fn) })
}

// updateRow runs a statement meant to change one row; notFound if none
// matched.
func (s *Store) updateRow(ctx context.Context, notFound error, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound
	}
	s.changed(ctx)
	return nil
}

func stateOf(ctx context.Context, tx *sql.Tx, id string) (State, error) {
	var st string
	err := tx.QueryRowContext(ctx, `SELECT state FROM sessions WHERE id = ?`, id).Scan(&st)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return State(st), err
}

type scanner interface{ Scan(dest ...any) error }

func scanSession(sc scanner) (Session, error) {
	var (
		sess                  Session
		name, endedAt         sql.NullString
		exitCode, pid, holder sql.NullInt64
		cmd, state            string
		createdAt, updatedAt  string
	)
	err := sc.Scan(&sess.ID, &name, &sess.Workspace, &cmd, &sess.Cwd, &sess.Cols, &sess.Rows,
		&sess.Owner, &state, &exitCode, &sess.Reason, &pid, &holder, &createdAt, &endedAt, &updatedAt, &sess.SizePolicy,
		&sess.RestoreCommand, &sess.AutoRestore, &sess.ShellIntegration, &sess.EnvPolicy, &sess.Cause,
		&sess.Agent, &sess.AgentConversation)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, err
	}
	sess.Name = name.String
	sess.State = State(state)
	if err := json.Unmarshal([]byte(cmd), &sess.Command); err != nil {
		return Session{}, fmt.Errorf("session %s: bad stored command %q: %w", sess.ID, cmd, err)
	}
	if exitCode.Valid {
		c := int(exitCode.Int64)
		sess.ExitCode = &c
	}
	sess.Pid = int(pid.Int64)
	sess.HolderPid = int(holder.Int64)
	if sess.CreatedAt, err = parseTime(createdAt); err != nil {
		return Session{}, fmt.Errorf("session %s: %w", sess.ID, err)
	}
	if sess.UpdatedAt, err = parseTime(updatedAt); err != nil {
		return Session{}, fmt.Errorf("session %s: %w", sess.ID, err)
	}
	if endedAt.Valid {
		t, err := parseTime(endedAt.String)
		if err != nil {
			return Session{}, fmt.Errorf("session %s: %w", sess.ID, err)
		}
		sess.EndedAt = &t
	}
	return sess, nil
}

// isUnique reports whether err is a uniqueness violation on column (as SQLite
// names it, "table.column").
func isUnique(err error, column string) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code()
	if code != sqlite3.SQLITE_CONSTRAINT_UNIQUE && code != sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
		return false
	}
	return strings.Contains(se.Error(), column)
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func nullInt(n int) sql.NullInt64 { return sql.NullInt64{Int64: int64(n), Valid: n != 0} }

func nullIntPtr(p *int) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(*p), Valid: true}
}
