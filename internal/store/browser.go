package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Browser sign-ins. A page opened with a token (the owner's or a registry
// token) swaps it for a credential of its own, which it keeps in its
// origin's localStorage: a cookie would reach every port of the host. The
// registry keeps the credential's SHA-256, what it was made from, and when
// it was last used; an unused one expires after BrowserIdle.

// BrowserIdle is how long a browser credential lasts unused.
const BrowserIdle = 14 * 24 * time.Hour

// browserTouchEvery is how stale LastUsedAt may grow before a use is
// recorded again: a busy page does not write the registry on every request.
const browserTouchEvery = time.Minute

// browserKeep is how long an expired or revoked credential stays listed
// before CreateBrowserCred forgets it.
const browserKeep = 30 * 24 * time.Hour

// ErrBrowserCredNotFound is matched with errors.Is.
var ErrBrowserCredNotFound = errors.New("store: browser credential not found")

// BrowserCred is a browser's credential as the registry records it:
// everything but its secret.
type BrowserCred struct {
	ID string // public: how `termkeep token ls --browsers` and the page name it
	// Owner: made from the owner token. Otherwise Token is the registry
	// token it was made from, and it lets in no more than that token does
	// at the time of each request.
	Owner bool
	// OwnerHash is, for Owner, the SecretHash of the owner token it was
	// made from: once that token is replaced, the credential is no one's.
	OwnerHash  string
	Token      string
	User       string
	Label      string // the browser, as its User-Agent named it
	CreatedAt  time.Time
	LastUsedAt time.Time
	RevokedAt  *time.Time // nil = not revoked
}

// Active reports whether c lets requests in at now: not revoked, and used
// within BrowserIdle.
func (c BrowserCred) Active(now time.Time) bool {
	return c.RevokedAt == nil && now.Before(c.ExpiresAt())
}

// ExpiresAt is when c expires if it is not used before.
func (c BrowserCred) ExpiresAt() time.Time { return c.LastUsedAt.Add(BrowserIdle) }

// NeedsTouch reports whether a use at now should be recorded: at most one
// write a minute, and never one that would move LastUsedAt back.
func (c BrowserCred) NeedsTouch(now time.Time) bool {
	return now.Sub(c.LastUsedAt) >= browserTouchEvery
}

const browserCols = `id, owner, owner_hash, token, "user", label, created_at, last_used_at, revoked_at`

// CreateBrowserCred records c, keeping only the SHA-256 of secret. Its
// CreatedAt and LastUsedAt are now; it returns c as recorded. Credentials
// expired or revoked for longer than a month are forgotten first.
func (s *Store) CreateBrowserCred(ctx context.Context, c BrowserCred, secret string) (BrowserCred, error) {
	op := "create browser credential " + c.ID
	switch {
	case c.ID == "":
		return BrowserCred{}, wrap("create browser credential", errors.New("empty id"))
	case c.User == "":
		return BrowserCred{}, wrap(op, errors.New("a browser credential needs a user"))
	case c.Owner == (c.Token != ""):
		return BrowserCred{}, wrap(op, errors.New("a browser credential comes from the owner token or from one registry token"))
	case c.Owner != (c.OwnerHash != ""):
		return BrowserCred{}, wrap(op, errors.New("a browser credential of the owner records which owner token it came from"))
	case len(secret) < 16:
		return BrowserCred{}, wrap(op, errors.New("the secret is too short to be one"))
	}
	now := s.now()
	c.CreatedAt, c.LastUsedAt, c.RevokedAt = now, now, nil
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		old := formatTime(now.Add(-browserKeep))
		if _, err := tx.ExecContext(ctx, `DELETE FROM browser_creds WHERE revoked_at < ? OR last_used_at < ?`,
			old, formatTime(now.Add(-browserKeep-BrowserIdle))); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO browser_creds (`+browserCols+`, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
			c.ID, c.Owner, c.OwnerHash, c.Token, c.User, c.Label, formatTime(now), formatTime(now), hashSecret(secret))
		switch {
		case isUnique(err, "browser_creds.id"):
			err = errors.New("a browser credential with this id already exists")
		case isUnique(err, "browser_creds.hash"):
			err = errors.New("a browser credential with this secret already exists")
		}
		return err
	})
	if err != nil {
		return BrowserCred{}, wrap(op, err)
	}
	return c, nil
}

// BrowserCredBySecret returns the credential whose secret is secret,
// whatever its state (see BrowserCred.Active), or ErrBrowserCredNotFound.
// The error never carries the secret.
func (s *Store) BrowserCredBySecret(ctx context.Context, secret string) (BrowserCred, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+browserCols+` FROM browser_creds WHERE hash = ?`, hashSecret(secret))
	c, err := scanBrowserCred(row)
	return c, wrap("find browser credential", err)
}

// BrowserCred returns the credential with the given id, or
// ErrBrowserCredNotFound.
func (s *Store) BrowserCred(ctx context.Context, id string) (BrowserCred, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+browserCols+` FROM browser_creds WHERE id = ?`, id)
	c, err := scanBrowserCred(row)
	return c, wrap("get browser credential "+id, err)
}

// BrowserCreds returns every credential still listed, oldest first; empty,
// non-nil when none.
func (s *Store) BrowserCreds(ctx context.Context) ([]BrowserCred, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+browserCols+` FROM browser_creds ORDER BY created_at, id`)
	if err != nil {
		return nil, wrap("list browser credentials", err)
	}
	defer rows.Close()
	out := []BrowserCred{}
	for rows.Next() {
		c, err := scanBrowserCred(rows)
		if err != nil {
			return nil, wrap("list browser credentials", err)
		}
		out = append(out, c)
	}
	return out, wrap("list browser credentials", rows.Err())
}

// TouchBrowserCred records that the credential let a request in now.
func (s *Store) TouchBrowserCred(ctx context.Context, id string) error {
	return wrap("touch browser credential "+id, s.updateRow(ctx, ErrBrowserCredNotFound,
		`UPDATE browser_creds SET last_used_at = max(last_used_at, ?) WHERE id = ?`, s.nowText(), id))
}

// RevokeBrowserCred marks the credential revoked from now on; revoking a
// revoked one keeps the first time. ErrBrowserCredNotFound if there is none.
func (s *Store) RevokeBrowserCred(ctx context.Context, id string) error {
	return wrap("revoke browser credential "+id, s.updateRow(ctx, ErrBrowserCredNotFound,
		`UPDATE browser_creds SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`, s.nowText(), id))
}

// revokeBrowserCredsOf revokes, in tx, the credentials made from the
// registry tokens the where clause picks (its one argument follows now).
func (s *Store) revokeBrowserCredsOf(ctx context.Context, tx *sql.Tx, where string, arg any) error {
	_, err := tx.ExecContext(ctx, `UPDATE browser_creds SET revoked_at = ? WHERE revoked_at IS NULL AND `+where,
		s.nowText(), arg)
	return err
}

func scanBrowserCred(sc scanner) (BrowserCred, error) {
	var (
		c             BrowserCred
		created, used string
		revoked       sql.NullString
		err           error
	)
	if err = sc.Scan(&c.ID, &c.Owner, &c.OwnerHash, &c.Token, &c.User, &c.Label, &created, &used, &revoked); errors.Is(err, sql.ErrNoRows) {
		return BrowserCred{}, ErrBrowserCredNotFound
	}
	if err != nil {
		return BrowserCred{}, err
	}
	if c.CreatedAt, err = parseTime(created); err != nil {
		return BrowserCred{}, err
	}
	if c.LastUsedAt, err = parseTime(used); err != nil {
		return BrowserCred{}, err
	}
	if revoked.Valid {
		t, err := parseTime(revoked.String)
		if err != nil {
			return BrowserCred{}, err
		}
		c.RevokedAt = &t
	}
	return c, nil
}
