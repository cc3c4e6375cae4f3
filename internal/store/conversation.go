package store

import (
	"context"
	"database/sql"
	"errors"
)

// ErrConversationChanged is returned when a session's agent conversation
// is no longer the one the caller meant to replace.
var ErrConversationChanged = errors.New("store: the session's agent conversation changed meanwhile")

// SetAgentConversation records conv as the conversation of agent session
// id, learned while it ran, with restore as the restore command that
// resumes it. was is the conversation the caller saw ("" for none): a
// recorded id is only ever replaced by a caller that names it
// (ErrConversationChanged otherwise), never cleared, and a session of no
// agent gets none.
func (s *Store) SetAgentConversation(ctx context.Context, id, was, conv, restore string) error {
	op := "set agent conversation of session " + id
	if conv == "" {
		return wrap(op, errors.New("empty conversation id"))
	}
	return wrap(op, s.sessionsTx(ctx, func(tx *sql.Tx) error {
		var agent, cur string
		err := tx.QueryRowContext(ctx, `SELECT agent, agent_conversation FROM sessions WHERE id = ?`, id).Scan(&agent, &cur)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrNotFound
		case err != nil:
			return err
		case agent == "":
			return errors.New("the session runs no agent")
		case cur != was:
			return ErrConversationChanged
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET agent_conversation = ?, restore_command = ?, updated_at = ? WHERE id = ?`,
			conv, restore, s.nowText(), id)
		return err
	}))
}
