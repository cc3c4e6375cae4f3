package store

import (
	"context"
	"testing"
)

// A token found once is found again without a read, and a touch, a revoke
// or its user's removal is seen by the very next lookup.
func TestTokenCache(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	if err := s.CreateUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	const secret = "0123456789abcdef-secret"
	if _, err := s.CreateToken(ctx, Token{ID: "t1", User: "alice", ReadOnly: true}, secret); err != nil {
		t.Fatal(err)
	}
	tok, err := s.TokenBySecret(ctx, secret)
	if err != nil || tok.ID != "t1" {
		t.Fatalf("TokenBySecret = %+v, %v", tok, err)
	}
	if _, ok, _ := s.tokens.lookup(hashSecret(secret)); !ok {
		t.Fatal("the token found is not cached")
	}
	if err := s.TouchToken(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	tok, _ = s.TokenBySecret(ctx, secret)
	if tok.LastUsedAt == nil {
		t.Fatal("a touch is not seen")
	}
	*tok.LastUsedAt = tok.CreatedAt.AddDate(-1, 0, 0)
	if again, _ := s.TokenBySecret(ctx, secret); again.LastUsedAt.Equal(*tok.LastUsedAt) {
		t.Error("a caller changed the cached row")
	}
	if err := s.RevokeToken(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if tok, _ := s.TokenBySecret(ctx, secret); tok.RevokedAt == nil {
		t.Error("a revoke is not seen")
	}
	const secret2 = "fedcba9876543210-secret"
	if _, err := s.CreateToken(ctx, Token{ID: "t2", User: "alice"}, secret2); err != nil {
		t.Fatal(err)
	}
	s.TokenBySecret(ctx, secret2)
	if _, err := s.RemoveUser(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	if tok, _ := s.TokenBySecret(ctx, secret2); tok.RevokedAt == nil {
		t.Error("a user's removal is not seen")
	}
}
