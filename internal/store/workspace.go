package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"termkeep/internal/atomicfile"
)

// ErrWorkspaceNotFound and ErrWorkspaceExists are matched with errors.Is.
var (
	ErrWorkspaceNotFound = errors.New("store: workspace not found")
	ErrWorkspaceExists   = errors.New("store: workspace already exists")
)

// Workspace is a named group of sessions with a directory (usually a project
// or a git worktree). A session belongs to the workspace its Workspace names.
type Workspace struct {
	Name        string
	Dir         string
	Paused      bool // its sessions were ended by a pause and wait for resume
	AutoRestore bool // its interrupted sessions are restored by the server
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const workspaceCols = `name, dir, paused, auto_restore, created_at, updated_at`

// CreateWorkspace records a new workspace; ErrWorkspaceExists if the name is
// taken.
func (s *Store) CreateWorkspace(ctx context.Context, w Workspace) error {
	op := "create workspace " + w.Name
	if w.Name == "" {
		return wrap(op, errors.New("empty workspace name"))
	}
	now := s.now()
	if w.CreatedAt.IsZero() {
		w.CreatedAt = now
	}
	w.UpdatedAt = now
	_, err := s.db.ExecContext(ctx, `INSERT INTO workspaces (`+workspaceCols+`) VALUES (?, ?, ?, ?, ?, ?)`,
		w.Name, w.Dir, w.Paused, w.AutoRestore, formatTime(w.CreatedAt), formatTime(w.UpdatedAt))
	if isUnique(err, "workspaces.name") {
		err = ErrWorkspaceExists
	} else if err == nil {
		s.changed(ctx)
		s.copyWorkspaces(ctx)
	}
	return wrap(op, err)
}

// Workspace returns the named workspace, or ErrWorkspaceNotFound.
func (s *Store) Workspace(ctx context.Context, name string) (Workspace, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+workspaceCols+` FROM workspaces WHERE name = ?`, name)
	w, err := scanWorkspace(row)
	return w, wrap("get workspace "+name, err)
}

// Workspaces returns every workspace by name; empty, non-nil when none.
func (s *Store) Workspaces(ctx context.Context) ([]Workspace, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+workspaceCols+` FROM workspaces ORDER BY name`)
	if err != nil {
		return nil, wrap("list workspaces", err)
	}
	defer rows.Close()
	out := []Workspace{}
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return nil, wrap("list workspaces", err)
		}
		out = append(out, w)
	}
	return out, wrap("list workspaces", rows.Err())
}

// SetWorkspacePaused records whether a workspace is paused.
func (s *Store) SetWorkspacePaused(ctx context.Context, name string, paused bool) error {
	return wrap("pause workspace "+name, s.updateWorkspace(ctx,
		`UPDATE workspaces SET paused = ?, updated_at = ? WHERE name = ?`, paused, s.nowText(), name))
}

// SetWorkspaceAutoRestore records whether a workspace's interrupted sessions
// are restored by the server.
func (s *Store) SetWorkspaceAutoRestore(ctx context.Context, name string, on bool) error {
	return wrap("set auto-restore of workspace "+name, s.updateWorkspace(ctx,
		`UPDATE workspaces SET auto_restore = ?, updated_at = ? WHERE name = ?`, on, s.nowText(), name))
}

// DeleteWorkspace removes a workspace's row. Its sessions' rows are the
// caller's to delete first.
func (s *Store) DeleteWorkspace(ctx context.Context, name string) error {
	return wrap("delete workspace "+name, s.updateWorkspace(ctx, `DELETE FROM workspaces WHERE name = ?`, name))
}

// SessionsInWorkspace returns the workspace's sessions, ordered as Sessions.
func (s *Store) SessionsInWorkspace(ctx context.Context, name string) ([]Session, error) {
	list, err := s.list(ctx, `SELECT `+sessionCols+` FROM sessions WHERE workspace = ? ORDER BY created_at, id`, name)
	return list, wrap("list sessions of workspace "+name, err)
}

// Pause moves a running session to paused, clearing its pid and recording
// why; ErrNotRunning if it is not running.
func (s *Store) Pause(ctx context.Context, id, reason string) error {
	return wrap("pause session "+id, s.sessionsTx(ctx, func(tx *sql.Tx) error {
		cur, err := stateOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur != StateRunning {
			return ErrNotRunning
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET state = ?, reason = ?, pid = NULL, updated_at = ? WHERE id = ?`,
			string(StatePaused), reason, s.nowText(), id)
		return err
	}))
}

func (s *Store) updateWorkspace(ctx context.Context, query string, args ...any) error {
	err := s.updateRow(ctx, ErrWorkspaceNotFound, query, args...)
	if err == nil {
		s.copyWorkspaces(ctx)
	}
	return err
}

func scanWorkspace(sc scanner) (Workspace, error) {
	var (
		w                    Workspace
		createdAt, updatedAt string
	)
	err := sc.Scan(&w.Name, &w.Dir, &w.Paused, &w.AutoRestore, &createdAt, &updatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Workspace{}, ErrWorkspaceNotFound
	}
	if err != nil {
		return Workspace{}, err
	}
	if w.CreatedAt, err = parseTime(createdAt); err != nil {
		return Workspace{}, err
	}
	if w.UpdatedAt, err = parseTime(updatedAt); err != nil {
		return Workspace{}, err
	}
	return w, nil
}

// WorkspacesSuffix is added to the registry's path for the copy of its
// workspaces kept beside it. A workspace's own directory, pause and
// auto-restore are in no session's meta.json, so a registry rebuilt from
// those (termkeep doctor --rebuild) takes them from this copy. It is
// rewritten after every change to a workspace, without fsync: a crash may
// leave it one change behind.
const WorkspacesSuffix = ".workspaces"

// workspaceCopy is one workspace in the copy beside the registry.
type workspaceCopy struct {
	Name        string    `json:"name"`
	Dir         string    `json:"dir"`
	Paused      bool      `json:"paused,omitempty"`
	AutoRestore bool      `json:"auto_restore,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// copyWorkspaces writes the copy of the workspaces beside the registry.
// Failing to is not the change's failure: the copy is for a rebuild. While
// a rollback stands (generation.go) the copy is left as it is: it has the
// workspaces the registry lost, which the rebuild makes again.
func (s *Store) copyWorkspaces(ctx context.Context) {
	s.genMu.Lock()
	rolledBack := s.gen.Rollback != nil
	s.genMu.Unlock()
	if rolledBack {
		return
	}
	s.wsMu.Lock()
	defer s.wsMu.Unlock()
	list, err := s.Workspaces(ctx)
	if err != nil {
		return
	}
	out := make([]workspaceCopy, 0, len(list))
	for _, w := range list {
		out = append(out, workspaceCopy{Name: w.Name, Dir: w.Dir, Paused: w.Paused, AutoRestore: w.AutoRestore, CreatedAt: w.CreatedAt})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	atomicfile.Write(s.path+WorkspacesSuffix, append(b, '\n'), false)
}

// ReadWorkspaceCopy reads the copy of the workspaces kept beside the
// registry at path (fs.ErrNotExist when there is none).
func ReadWorkspaceCopy(path string) ([]Workspace, error) {
	b, err := os.ReadFile(path + WorkspacesSuffix)
	if err != nil {
		return nil, err
	}
	var list []workspaceCopy
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("store: decode %s: %w", path+WorkspacesSuffix, err)
	}
	out := make([]Workspace, 0, len(list))
	for _, w := range list {
		if w.Name == "" || w.Dir == "" {
			continue
		}
		out = append(out, Workspace{Name: w.Name, Dir: w.Dir, Paused: w.Paused, AutoRestore: w.AutoRestore, CreatedAt: w.CreatedAt})
	}
	return out, nil
}
