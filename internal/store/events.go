package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Event kinds. Kinds are part of the API (`termkeep events`, the event
// stream): add new ones, never rename one.
const (
	EventSessionCreated     = "session.created"
	EventSessionRenamed     = "session.renamed"
	EventSessionRemoved     = "session.removed"
	EventSessionPruned      = "session.pruned" // removed by the server: over a bound on kept ended sessions
	EventViewerAttached     = "viewer.attached"
	EventViewerDetached     = "viewer.detached"
	EventSessionClosed      = "session.closed"      // ended on purpose (kill, close)
	EventProcessExited      = "process.exited"      // the child exited on its own
	EventSessionInterrupted = "session.interrupted" // the holder or the machine died
	EventSessionRestored    = "session.restored"    // a new process in an ended or paused session
	EventSessionPaused      = "session.paused"      // its workspace was paused
	EventSessionQuiet       = "session.quiet"       // printed nothing for the quiet threshold (session/quiet.go)
	// The first server of a boot found sessions of an earlier boot: the
	// machine restarted under them (server/boot.go).
	EventMachineRestarted = "machine.restarted"
	// The registry was found behind the generation kept beside it: changes
	// it had recorded are lost (generation.go).
	EventRegistryRolledBack = "registry.rolled_back"
	EventWorkspaceCreated   = "workspace.created"
	EventWorkspaceRemoved   = "workspace.removed" // with its sessions
	// Access (users.go): about no session, so the owner's only to read.
	EventUserAdded    = "user.added"
	EventUserRemoved  = "user.removed" // its tokens revoked
	EventTokenCreated = "token.created"
	EventTokenRevoked = "token.revoked"
	// A browser swapped a token for a credential of its own, and one was
	// revoked (sign out, `termkeep token revoke`); never with a secret.
	EventBrowserSignedIn = "browser.signed_in"
	EventBrowserRevoked  = "browser.revoked"
)

// Event is one entry of the registry's history. IDs grow strictly and are
// never reused, even after old events are pruned, so a reader resumes with
// "everything after id N" and misses nothing that is still kept.
type Event struct {
	ID      int64
	At      time.Time
	Kind    string
	Session string // the session's id; "" for events about no session
	// Detail is a JSON object with the kind's particulars; nil means {}.
	Detail json.RawMessage
}

// AddEvent appends e to the history and returns it as stored: with its ID,
// and At from the clock when e.At is zero. Detail must be a JSON object.
func (s *Store) AddEvent(ctx context.Context, e Event) (Event, error) {
	if err := s.checkEvent(&e); err != nil {
		return Event{}, err
	}
	return s.insertEvent(ctx, s.db, e)
}

// AddEvents appends es to the history in one transaction, in order, and
// returns them as stored (AddEvent's rules for each). Either all are
// added or none is. es is not modified.
func (s *Store) AddEvents(ctx context.Context, es []Event) ([]Event, error) {
	out := make([]Event, len(es))
	for i, e := range es {
		if err := s.checkEvent(&e); err != nil {
			return nil, err
		}
		out[i] = e
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrap("add events", err)
	}
	for i := range out {
		if out[i], err = s.insertEvent(ctx, tx, out[i]); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, wrap("add events", err)
	}
	return out, nil
}

// checkEvent checks e and fills in its defaults: Detail {} and At now.
func (s *Store) checkEvent(e *Event) error {
	if e.Kind == "" {
		return wrap("add event", errors.New("event has no kind"))
	}
	if len(e.Detail) == 0 {
		e.Detail = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(e.Detail, &obj); err != nil || obj == nil {
		return wrap("add event "+e.Kind, fmt.Errorf("detail is not a JSON object: %s", e.Detail))
	}
	if e.At.IsZero() {
		e.At = s.now()
	}
	e.At = e.At.UTC()
	return nil
}

func (s *Store) insertEvent(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, e Event) (Event, error) {
	res, err := db.ExecContext(ctx,
		`INSERT INTO events (at, kind, session, detail) VALUES (?, ?, ?, ?)`,
		formatTime(e.At), e.Kind, e.Session, string(e.Detail))
	if err != nil {
		return Event{}, wrap("add event "+e.Kind, err)
	}
	if e.ID, err = res.LastInsertId(); err != nil {
		return Event{}, wrap("add event "+e.Kind, err)
	}
	return e, nil
}

// Events returns the events with an id above afterID, oldest first, at most
// limit of them (limit <= 0: all).
func (s *Store) Events(ctx context.Context, afterID int64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT id, at, kind, session, detail FROM events WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit)
	if err != nil {
		return nil, wrap("list events", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var (
			e          Event
			at, detail string
		)
		if err := rows.Scan(&e.ID, &at, &e.Kind, &e.Session, &detail); err != nil {
			return nil, wrap("list events", err)
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, wrap("list events", err)
		}
		e.Detail = json.RawMessage(detail)
		out = append(out, e)
	}
	return out, wrap("list events", rows.Err())
}

// LastEventID returns the id of the newest event, 0 when there is none.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT max(id) FROM events`).Scan(&id)
	return id.Int64, wrap("last event", err)
}

// PruneEvents deletes all but the newest keep events and returns how many
// it deleted. Ids are not reused afterwards.
func (s *Store) PruneEvents(ctx context.Context, keep int) (int64, error) {
	res, err := s.db.ExecContext(ctx,
		`DELETE FROM events WHERE id <= (SELECT coalesce(max(id), 0) FROM events) - ?`, max(keep, 0))
	if err != nil {
		return 0, wrap("prune events", err)
	}
	n, err := res.RowsAffected()
	return n, wrap("prune events", err)
}
