package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"slices"
	"time"
)

// Users and tokens. The owner (the OS user running the server) is a user
// without a row; every other user has one. A token lets its user (or a
// narrower scope: one session, one workspace, read only) in through the
// browser listener.
//
// A token's secret never reaches the file: the store keeps its SHA-256 and
// finds a token by hashing the secret it is shown. A secret that is lost is
// gone; revoke the token and make another.

// ErrUserNotFound, ErrUserExists, ErrUserBusy and ErrTokenNotFound are
// matched with errors.Is.
var (
	ErrUserNotFound = errors.New("store: user not found")
	ErrUserExists   = errors.New("store: user already exists")
	// ErrUserBusy: RemoveUser was asked to keep a user who owns running
	// sessions.
	ErrUserBusy      = errors.New("store: user owns running sessions")
	ErrTokenNotFound = errors.New("store: token not found")
)

// User is a user with a row in the registry.
type User struct {
	Name      string
	CreatedAt time.Time
}

// Token is an access token as the registry records it: everything but its
// secret.
type Token struct {
	ID        string // short and public: how a person names it (revoke, ls)
	Name      string // a label for people ("" = none)
	User      string
	Session   string // the one session it reaches, by id ("" = any of User's)
	Workspace string // the one workspace it reaches ("" = any)
	ReadOnly  bool
	ExpiresAt *time.Time // nil = never
	CreatedAt time.Time
	// LastUsedAt is when the token last let a request in, as recorded by
	// TouchToken (nil = never).
	LastUsedAt *time.Time
	RevokedAt  *time.Time // nil = not revoked
}

// Active reports whether t lets requests in at now: not revoked, not expired.
func (t Token) Active(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}

// hashSecret is what the registry keeps of a secret: its SHA-256, in hex.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// SecretHash is how the registry names a secret without holding it: its
// SHA-256, in hex.
func SecretHash(secret string) string { return hashSecret(secret) }

// CreateUser records a user; ErrUserExists if the name is taken.
func (s *Store) CreateUser(ctx context.Context, name string) error {
	op := "create user " + name
	if name == "" {
		return wrap(op, errors.New("empty user name"))
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO users (name, created_at) VALUES (?, ?)`, name, s.nowText())
	if isUnique(err, "users.name") {
		err = ErrUserExists
	}
	return wrap(op, err)
}

// User returns the named user, or ErrUserNotFound.
func (s *Store) User(ctx context.Context, name string) (User, error) {
	var (
		u  User
		at string
	)
	err := s.db.QueryRowContext(ctx, `SELECT name, created_at FROM users WHERE name = ?`, name).Scan(&u.Name, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, wrap("get user "+name, ErrUserNotFound)
	}
	if err == nil {
		u.CreatedAt, err = parseTime(at)
	}
	return u, wrap("get user "+name, err)
}

// Users returns every user by name; empty, non-nil when none.
func (s *Store) Users(ctx context.Context) ([]User, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, created_at FROM users ORDER BY name`)
	if err != nil {
		return nil, wrap("list users", err)
	}
	defer rows.Close()
	out := []User{}
	for rows.Next() {
		var (
			u  User
			at string
		)
		if err := rows.Scan(&u.Name, &at); err != nil {
			return nil, wrap("list users", err)
		}
		if u.CreatedAt, err = parseTime(at); err != nil {
			return nil, wrap("list users", err)
		}
		out = append(out, u)
	}
	return out, wrap("list users", rows.Err())
}

// RemoveUser deletes user name and revokes its tokens and the browser
// credentials made from them, in one transaction,
// and returns the ids of the tokens it revoked (those revoked before are
// left as they were), so the caller can end their requests in flight.
// Unless force, a user who owns running sessions is left alone and the
// error is ErrUserBusy; the check and the removal are one transaction, so
// no session of the user starts in between. The user's sessions are not
// touched: they keep name as their owner. ErrUserNotFound if there is no
// such user.
func (s *Store) RemoveUser(ctx context.Context, name string, force bool) (revoked []string, err error) {
	err = s.tokens.write(func() error {
		return s.inTx(ctx, func(tx *sql.Tx) error {
			if !force {
				var running int
				err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE owner = ? AND state = ?`,
					name, string(StateRunning)).Scan(&running)
				if err != nil {
					return err
				}
				if running > 0 {
					// Existence first: an unknown user is no one's to end.
					if err := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE name = ?`, name).Scan(new(int)); errors.Is(err, sql.ErrNoRows) {
						return ErrUserNotFound
					} else if err != nil {
						return err
					}
					return ErrUserBusy
				}
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE name = ?`, name)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return ErrUserNotFound
			}
			if err := s.revokeBrowserCredsOf(ctx, tx, `"user" = ? AND owner = 0`, name); err != nil {
				return err
			}
			rows, err := tx.QueryContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE "user" = ? AND revoked_at IS NULL RETURNING id`,
				s.nowText(), name)
			if err != nil {
				return err
			}
			defer rows.Close()
			revoked = []string{}
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					return err
				}
				revoked = append(revoked, id)
			}
			return rows.Err()
		})
	})
	if err != nil {
		return nil, wrap("remove user "+name, err)
	}
	slices.Sort(revoked)
	return revoked, nil
}

const tokenCols = `id, name, "user", session, workspace, read_only, expires_at, created_at, last_used_at, revoked_at`

// CreateToken records t, keeping only the SHA-256 of secret. A zero
// CreatedAt is set from the clock; LastUsedAt and RevokedAt start unset.
// It returns the token as recorded. Whether t.User exists is the caller's
// to check (the owner has no row).
func (s *Store) CreateToken(ctx context.Context, t Token, secret string) (Token, error) {
	op := "create token " + t.ID
	switch {
	case t.ID == "":
		return Token{}, wrap("create token", errors.New("empty token id"))
	case t.User == "":
		return Token{}, wrap(op, errors.New("a token needs a user"))
	case len(secret) < 16:
		return Token{}, wrap(op, errors.New("the secret is too short to be one"))
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = s.now()
	}
	t.LastUsedAt, t.RevokedAt = nil, nil
	err := s.tokens.write(func() error {
		_, err := s.db.ExecContext(ctx, `INSERT INTO tokens (`+tokenCols+`, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)`,
			t.ID, t.Name, t.User, t.Session, t.Workspace, t.ReadOnly, nullTime(t.ExpiresAt), formatTime(t.CreatedAt),
			hashSecret(secret))
		return err
	})
	switch {
	case isUnique(err, "tokens.id"):
		err = errors.New("a token with this id already exists")
	case isUnique(err, "tokens.hash"):
		err = errors.New("a token with this secret already exists")
	}
	if err != nil {
		return Token{}, wrap(op, err)
	}
	return t, nil
}

// TokenBySecret returns the token whose secret is secret, whatever its state
// (see Token.Active), or ErrTokenNotFound. The error never carries the secret.
func (s *Store) TokenBySecret(ctx context.Context, secret string) (Token, error) {
	hash := hashSecret(secret)
	t, ok, epoch := s.tokens.lookup(hash)
	if ok {
		return t, nil
	}
	row := s.db.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = ?`, hash)
	t, err := scanToken(row)
	if err == nil {
		s.tokens.store(hash, t, epoch)
	}
	return t, wrap("find token", err)
}

// Token returns the token with the given id, or ErrTokenNotFound.
func (s *Store) Token(ctx context.Context, id string) (Token, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE id = ?`, id)
	t, err := scanToken(row)
	return t, wrap("get token "+id, err)
}

// Tokens returns every token, revoked and expired ones included, oldest
// first; empty, non-nil when none.
func (s *Store) Tokens(ctx context.Context) ([]Token, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+tokenCols+` FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, wrap("list tokens", err)
	}
	defer rows.Close()
	out := []Token{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, wrap("list tokens", err)
		}
		out = append(out, t)
	}
	return out, wrap("list tokens", rows.Err())
}

// TouchToken records that the token let a request in now.
func (s *Store) TouchToken(ctx context.Context, id string) error {
	return wrap("touch token "+id, s.tokens.write(func() error {
		return s.updateToken(ctx, `UPDATE tokens SET last_used_at = ? WHERE id = ?`, s.nowText(), id)
	}))
}

// RevokeToken marks the token revoked from now on, and the browser
// credentials made from it with it; revoking a revoked token keeps the
// first time. ErrTokenNotFound if there is none.
func (s *Store) RevokeToken(ctx context.Context, id string) error {
	return wrap("revoke token "+id, s.tokens.write(func() error {
		return s.inTx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`, s.nowText(), id)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return ErrTokenNotFound
			}
			return s.revokeBrowserCredsOf(ctx, tx, `token = ?`, id)
		})
	}))
}

func (s *Store) updateToken(ctx context.Context, query string, args ...any) error {
	return s.updateRow(ctx, ErrTokenNotFound, query, args...)
}

func scanToken(sc scanner) (Token, error) {
	var (
		t                          Token
		createdAt                  string
		expiresAt, used, revokedAt sql.NullString
	)
	err := sc.Scan(&t.ID, &t.Name, &t.User, &t.Session, &t.Workspace, &t.ReadOnly, &expiresAt, &createdAt, &used, &revokedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, ErrTokenNotFound
	}
	if err != nil {
		return Token{}, err
	}
	if t.CreatedAt, err = parseTime(createdAt); err != nil {
		return Token{}, err
	}
	for _, f := range []struct {
		in  sql.NullString
		out **time.Time
	}{{expiresAt, &t.ExpiresAt}, {used, &t.LastUsedAt}, {revokedAt, &t.RevokedAt}} {
		if !f.in.Valid {
			continue
		}
		v, err := parseTime(f.in.String)
		if err != nil {
			return Token{}, err
		}
		*f.out = &v
	}
	return t, nil
}

func nullTime(t *time.Time) sql.NullString {
	if t == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: formatTime(*t), Valid: true}
}
