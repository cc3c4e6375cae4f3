package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations is the schema's history: migrations[i] brings the schema to
// version i+1. Append only; never edit or reorder an entry that has shipped,
// since databases in the field have already applied it.
var migrations = []string{
	// 1: sessions.
	`CREATE TABLE sessions (
		id         TEXT NOT NULL PRIMARY KEY,
		name       TEXT,
		workspace  TEXT NOT NULL DEFAULT '',
		command    TEXT NOT NULL DEFAULT '[]',
		cwd        TEXT NOT NULL DEFAULT '',
		cols       INTEGER NOT NULL DEFAULT 0,
		"rows"     INTEGER NOT NULL DEFAULT 0,
		owner      TEXT NOT NULL DEFAULT '',
		state      TEXT NOT NULL,
		exit_code  INTEGER,
		reason     TEXT NOT NULL DEFAULT '',
		pid        INTEGER,
		holder_pid INTEGER,
		created_at TEXT NOT NULL,
		ended_at   TEXT,
		updated_at TEXT NOT NULL
	) STRICT;
	-- NULLs are distinct in a unique index: any number of unnamed sessions.
	CREATE UNIQUE INDEX sessions_name ON sessions(name);
	CREATE INDEX sessions_created ON sessions(created_at, id);
	CREATE INDEX sessions_state ON sessions(state);`,
	// 2: events, the registry's append-only history (see events.go).
	`CREATE TABLE events (
		id      INTEGER PRIMARY KEY AUTOINCREMENT,
		at      TEXT NOT NULL,
		kind    TEXT NOT NULL,
		session TEXT NOT NULL DEFAULT '',
		detail  TEXT NOT NULL DEFAULT '{}'
	) STRICT;
	CREATE INDEX events_session ON events(session, id);`,
	// 3: a session's own size policy ("" = the server's).
	`ALTER TABLE sessions ADD COLUMN size_policy TEXT NOT NULL DEFAULT '';`,
	// 4: what a restore runs: the command instead of the original (a shell
	// command line, "" = the original), whether the server restores the
	// session by itself after a reboot, and whether shell integration is on.
	`ALTER TABLE sessions ADD COLUMN restore_command TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN auto_restore INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN shell_integration INTEGER NOT NULL DEFAULT 1;`,
	// 5: workspaces, named groups of sessions with a directory.
	`CREATE TABLE workspaces (
		name         TEXT NOT NULL PRIMARY KEY,
		dir          TEXT NOT NULL,
		paused       INTEGER NOT NULL DEFAULT 0,
		auto_restore INTEGER NOT NULL DEFAULT 0,
		created_at   TEXT NOT NULL,
		updated_at   TEXT NOT NULL
	) STRICT;
	CREATE INDEX sessions_workspace ON sessions(workspace);`,
	// 6: users besides the owner, and their access tokens (see users.go):
	// only a token's SHA-256 is kept, never its secret.
	`CREATE TABLE users (
		name       TEXT NOT NULL PRIMARY KEY,
		created_at TEXT NOT NULL
	) STRICT;
	CREATE TABLE tokens (
		id           TEXT NOT NULL PRIMARY KEY,
		name         TEXT NOT NULL DEFAULT '',
		"user"       TEXT NOT NULL,
		hash         TEXT NOT NULL UNIQUE,
		session      TEXT NOT NULL DEFAULT '',
		workspace    TEXT NOT NULL DEFAULT '',
		read_only    INTEGER NOT NULL DEFAULT 0,
		expires_at   TEXT,
		created_at   TEXT NOT NULL,
		last_used_at TEXT,
		revoked_at   TEXT
	) STRICT;
	CREATE INDEX tokens_user ON tokens("user");`,
	// 7: browser sign-ins (see browser.go): a credential a page got in
	// exchange for a token, kept as its SHA-256, never its secret.
	`CREATE TABLE browser_creds (
		id           TEXT NOT NULL PRIMARY KEY,
		hash         TEXT NOT NULL UNIQUE,
		owner        INTEGER NOT NULL DEFAULT 0,
		owner_hash   TEXT NOT NULL DEFAULT '',
		token        TEXT NOT NULL DEFAULT '',
		"user"       TEXT NOT NULL,
		label        TEXT NOT NULL DEFAULT '',
		created_at   TEXT NOT NULL,
		last_used_at TEXT NOT NULL,
		revoked_at   TEXT
	) STRICT;
	CREATE INDEX browser_creds_token ON browser_creds(token);`,
	// 8: how a session's child environment was made ("caller": the
	// creating CLI's own, "login": a clean login environment; "" = made
	// before this was recorded, which was the caller's), so that a restore,
	// after a server restart too, makes it the same way.
	`ALTER TABLE sessions ADD COLUMN env_policy TEXT NOT NULL DEFAULT '';`,
	// 9: why an interrupted session ended, when known (the machine
	// restarted, its holder was killed: server/restorepolicy's Cause).
	`ALTER TABLE sessions ADD COLUMN cause TEXT NOT NULL DEFAULT '';`,
	// 10: the registry's generation, one more with every change to a
	// session or workspace, so that a registry rolled back (a WAL lost or
	// garbled) is told from the copy kept beside it (generation.go).
	`CREATE TABLE generation (n INTEGER NOT NULL) STRICT;
	INSERT INTO generation (n) VALUES (0);
	CREATE TRIGGER sessions_insert_gen AFTER INSERT ON sessions BEGIN UPDATE generation SET n = n + 1; END;
	CREATE TRIGGER sessions_update_gen AFTER UPDATE ON sessions BEGIN UPDATE generation SET n = n + 1; END;
	CREATE TRIGGER sessions_delete_gen AFTER DELETE ON sessions BEGIN UPDATE generation SET n = n + 1; END;
	CREATE TRIGGER workspaces_insert_gen AFTER INSERT ON workspaces BEGIN UPDATE generation SET n = n + 1; END;
	CREATE TRIGGER workspaces_update_gen AFTER UPDATE ON workspaces BEGIN UPDATE generation SET n = n + 1; END;
	CREATE TRIGGER workspaces_delete_gen AFTER DELETE ON workspaces BEGIN UPDATE generation SET n = n + 1; END;`,
	// 11: the AI agent a session runs ("" = none) and the id of the
	// conversation it was pinned to ("" = not pinned), so that a restore
	// resumes that conversation or, when the agent never recorded it,
	// starts afresh.
	`ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN agent_conversation TEXT NOT NULL DEFAULT '';`,
	// 12: a session's name is unique within its workspace, not across
	// them: a workspace (and an MCP server scoped to it) names its
	// sessions as if no other workspace existed.
	`DROP INDEX sessions_name;
	CREATE UNIQUE INDEX sessions_name ON sessions(workspace, name);`,
}

// genMigration is the migration that adds the generation: a schema
// before it (tests of older migrations) has none to compare.
const genMigration = 10

// migrate applies the migrations the file lacks, each in its own transaction
// together with its schema_migrations row, so a crash leaves the schema at
// some whole version.
func (s *Store) migrate(ctx context.Context, migs []string) error {
	var have int
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		err := tx.QueryRowContext(ctx,
			`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n)
		if err != nil {
			return err
		}
		if n == 0 {
			// A fresh file has no tables at all; anything else was made by
			// someone else and is not ours to change.
			err := tx.QueryRowContext(ctx,
				`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`).Scan(&n)
			if err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("the file is a SQLite database but not a termkeep registry (it has tables but no schema_migrations); refusing to change it")
			}
			_, err = tx.ExecContext(ctx,
				`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`)
			if err != nil {
				return err
			}
		}
		v, err := schemaVersion(ctx, tx)
		have = v
		if err != nil {
			return err
		}
		return tooNew(v, len(migs))
	})
	if err != nil {
		return err
	}

	for v := have + 1; v <= len(migs); v++ {
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			// Re-read under the write lock: only the missing versions run.
			cur, err := schemaVersion(ctx, tx)
			if err != nil {
				return err
			}
			if err := tooNew(cur, len(migs)); err != nil {
				return err
			}
			if cur >= v {
				return nil
			}
			if _, err := tx.ExecContext(ctx, migs[v-1]); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx,
				`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, s.nowText())
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v, err)
		}
	}
	return nil
}

func schemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	var v int
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

func tooNew(have, known int) error {
	if have > known {
		return fmt.Errorf("the registry's schema version %d is newer than this termkeep knows (%d): it was written by a newer termkeep; run that version, or move the file aside to start an empty registry", have, known)
	}
	return nil
}
