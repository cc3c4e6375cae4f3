package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestUsers(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	if list, err := s.Users(ctx); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("Users on an empty registry = %#v, %v", list, err)
	}
	if _, err := s.User(ctx, "bob"); !errors.Is(err, ErrUserNotFound) {
		t.Fatalf("missing user: %v, want ErrUserNotFound", err)
	}
	for _, n := range []string{"bob", "alice"} {
		if err := s.CreateUser(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateUser(ctx, "bob"); !errors.Is(err, ErrUserExists) {
		t.Fatalf("second bob: %v, want ErrUserExists", err)
	}
	if err := s.CreateUser(ctx, ""); err == nil {
		t.Fatal("a user without a name was created")
	}
	list, err := s.Users(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "alice" || list[1].Name != "bob" || list[0].CreatedAt.IsZero() {
		t.Fatalf("Users = %+v, %v", list, err)
	}
	if u, err := s.User(ctx, "bob"); err != nil || u.Name != "bob" {
		t.Fatalf("User(bob) = %+v, %v", u, err)
	}
}

func TestTokens(t *testing.T) {
	s, clk, _ := openTest(t)
	ctx := context.Background()
	if list, err := s.Tokens(ctx); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("Tokens on an empty registry = %#v, %v", list, err)
	}
	exp := clk.Now().Add(time.Hour)
	a, err := s.CreateToken(ctx, Token{ID: "t1", Name: "laptop", User: "bob", Workspace: "w", ReadOnly: true, ExpiresAt: &exp},
		"secret-number-one-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	if a.CreatedAt.IsZero() || a.LastUsedAt != nil || a.RevokedAt != nil {
		t.Fatalf("created %+v", a)
	}
	if _, err := s.CreateToken(ctx, Token{ID: "t2", User: "alice", Session: "s1"}, "secret-number-two-0123456789"); err != nil {
		t.Fatal(err)
	}
	// Ids and secrets are unique; a token needs an id, a user and a secret.
	for _, c := range []struct {
		tok    Token
		secret string
	}{
		{Token{ID: "t1", User: "x"}, "another-secret-0123456789"},
		{Token{ID: "t3", User: "x"}, "secret-number-one-0123456789"},
		{Token{User: "x"}, "a-third-secret-0123456789"},
		{Token{ID: "t4"}, "a-fourth-secret-0123456789"},
		{Token{ID: "t5", User: "x"}, "q7z"},
	} {
		if _, err := s.CreateToken(ctx, c.tok, c.secret); err == nil {
			t.Errorf("CreateToken(%+v) succeeded", c.tok)
		} else if strings.Contains(err.Error(), c.secret) {
			t.Errorf("the error names the secret: %v", err)
		}
	}

	got, err := s.TokenBySecret(ctx, "secret-number-one-0123456789")
	if err != nil || got.ID != "t1" || got.User != "bob" || got.Name != "laptop" || got.Workspace != "w" || !got.ReadOnly ||
		got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) {
		t.Fatalf("TokenBySecret = %+v, %v", got, err)
	}
	if _, err := s.TokenBySecret(ctx, "secret-number-one-012345678"); !errors.Is(err, ErrTokenNotFound) {
		t.Fatalf("a wrong secret: %v, want ErrTokenNotFound", err)
	}
	if tok, err := s.Token(ctx, "t2"); err != nil || tok.Session != "s1" || tok.ExpiresAt != nil || tok.ReadOnly {
		t.Fatalf("Token(t2) = %+v, %v", tok, err)
	}

	// Expiry is decided by the caller's clock.
	if !got.Active(exp.Add(-time.Second)) || got.Active(exp) || got.Active(exp.Add(time.Second)) {
		t.Errorf("Active around the expiry of %+v", got)
	}

	if err := s.TouchToken(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if tok, _ := s.Token(ctx, "t1"); tok.LastUsedAt == nil || !tok.LastUsedAt.After(tok.CreatedAt) {
		t.Fatalf("after TouchToken: %+v", tok)
	}

	// Revocation: the first time is kept; the token is still found (the
	// caller refuses it), and listed.
	if err := s.RevokeToken(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	first, _ := s.Token(ctx, "t2")
	if first.RevokedAt == nil || first.Active(clk.Now()) {
		t.Fatalf("after RevokeToken: %+v", first)
	}
	if err := s.RevokeToken(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Token(ctx, "t2"); !again.RevokedAt.Equal(*first.RevokedAt) {
		t.Errorf("revoking twice moved the time from %v to %v", first.RevokedAt, again.RevokedAt)
	}
	if byS, err := s.TokenBySecret(ctx, "secret-number-two-0123456789"); err != nil || byS.RevokedAt == nil {
		t.Errorf("a revoked token by its secret: %+v, %v", byS, err)
	}
	for _, f := range []func(context.Context, string) error{s.RevokeToken, s.TouchToken} {
		if err := f(ctx, "nope"); !errors.Is(err, ErrTokenNotFound) {
			t.Errorf("unknown token: %v, want ErrTokenNotFound", err)
		}
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "t1" || list[1].ID != "t2" {
		t.Fatalf("Tokens = %+v, %v", list, err)
	}
}

// The registry keeps a token's SHA-256 only: no byte sequence of the secret
// is in the database file or its WAL, open or closed.
func TestTokenSecretNotStored(t *testing.T) {
	s, _, path := openTest(t)
	ctx := context.Background()
	secret := "Zq9-very-distinctive-secret-XYZ_42"
	if _, err := s.CreateToken(ctx, Token{ID: "t1", User: "bob"}, secret); err != nil {
		t.Fatal(err)
	}
	var hash string
	if err := s.db.QueryRowContext(ctx, `SELECT hash FROM tokens WHERE id = 't1'`).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if hash != hashSecret(secret) || len(hash) != 64 {
		t.Fatalf("stored hash %q, want the hex SHA-256 of the secret", hash)
	}
	check := func(when string) {
		files, _ := filepath.Glob(path + "*")
		if len(files) == 0 {
			t.Fatalf("no database files at %s", path)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s: the secret is in %s", when, f)
			}
		}
	}
	check("open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed")
}

// Removing a user revokes its tokens that were still good, in the same
// transaction; one who owns running sessions stays unless forced; its
// sessions stay either way.
func TestRemoveUser(t *testing.T) {
	s, clk, _ := openTest(t)
	ctx := context.Background()
	for _, n := range []string{"alice", "bob"} {
		if err := s.CreateUser(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	for i, tok := range []Token{{ID: "a1", User: "alice"}, {ID: "a2", User: "alice"}, {ID: "a3", User: "alice"}, {ID: "b1", User: "bob"}} {
		if _, err := s.CreateToken(ctx, tok, fmt.Sprintf("secret-%d-0123456789abcdef", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RevokeToken(ctx, "a3"); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Token(ctx, "a3")
	run := Session{ID: "s-run", Owner: "alice", Command: []string{"sh"}, State: StateRunning}
	done := Session{ID: "s-done", Owner: "alice", Command: []string{"sh"}, State: StateRunning}
	for _, sess := range []Session{run, done} {
		if err := s.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.End(ctx, "s-done", StateExited, nil, ""); err != nil {
		t.Fatal(err)
	}

	if _, err := s.RemoveUser(ctx, "alice", false); !errors.Is(err, ErrUserBusy) {
		t.Fatalf("removing a user with a running session: %v, want ErrUserBusy", err)
	}
	if _, err := s.User(ctx, "alice"); err != nil {
		t.Fatalf("a refused removal removed alice: %v", err)
	}
	if tok, _ := s.Token(ctx, "a1"); tok.RevokedAt != nil {
		t.Fatalf("a refused removal revoked %+v", tok)
	}
	for _, force := range []bool{false, true} {
		if _, err := s.RemoveUser(ctx, "nobody", force); !errors.Is(err, ErrUserNotFound) {
			t.Errorf("removing an unknown user (force %v): %v, want ErrUserNotFound", force, err)
		}
	}

	revoked, err := s.RemoveUser(ctx, "alice", true)
	if err != nil || !slices.Equal(revoked, []string{"a1", "a2"}) {
		t.Fatalf("RemoveUser(alice, force) = %v, %v; want [a1 a2]", revoked, err)
	}
	if _, err := s.User(ctx, "alice"); !errors.Is(err, ErrUserNotFound) {
		t.Errorf("alice after removal: %v", err)
	}
	for _, id := range []string{"a1", "a2"} {
		if tok, _ := s.Token(ctx, id); tok.RevokedAt == nil || !tok.RevokedAt.After(*before.RevokedAt) || tok.Active(clk.Now()) {
			t.Errorf("token %s after its user's removal: %+v", id, tok)
		}
	}
	if tok, _ := s.Token(ctx, "a3"); !tok.RevokedAt.Equal(*before.RevokedAt) {
		t.Errorf("a token revoked before moved its time from %v to %v", before.RevokedAt, tok.RevokedAt)
	}
	if tok, _ := s.Token(ctx, "b1"); tok.RevokedAt != nil {
		t.Errorf("another user's token was revoked: %+v", tok)
	}
	for _, id := range []string{"s-run", "s-done"} {
		if sess, err := s.Session(ctx, id); err != nil || sess.Owner != "alice" {
			t.Errorf("session %s after its owner's removal: %+v, %v", id, sess, err)
		}
	}
	if _, err := s.RemoveUser(ctx, "alice", true); !errors.Is(err, ErrUserNotFound) {
		t.Errorf("removing alice twice: %v, want ErrUserNotFound", err)
	}
	// A user with ended sessions only goes without force.
	if revoked, err := s.RemoveUser(ctx, "bob", false); err != nil || !slices.Equal(revoked, []string{"b1"}) {
		t.Errorf("RemoveUser(bob) = %v, %v", revoked, err)
	}
}
