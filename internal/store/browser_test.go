package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A browser credential lasts BrowserIdle unused, whatever its age; a use
// is recorded at most once a minute.
func TestBrowserCredActive(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	revoked := t0.Add(time.Hour)
	for _, tc := range []struct {
		name   string
		c      BrowserCred
		now    time.Time
		active bool
		touch  bool
	}{
		{"fresh", BrowserCred{LastUsedAt: t0}, t0, true, false},
		{"used 59 s ago", BrowserCred{LastUsedAt: t0}, t0.Add(59 * time.Second), true, false},
		{"used a minute ago", BrowserCred{LastUsedAt: t0}, t0.Add(time.Minute), true, true},
		{"a day short of expiry", BrowserCred{LastUsedAt: t0}, t0.Add(13 * 24 * time.Hour), true, true},
		{"a second before expiry", BrowserCred{LastUsedAt: t0}, t0.Add(BrowserIdle - time.Second), true, true},
		{"at expiry", BrowserCred{LastUsedAt: t0}, t0.Add(BrowserIdle), false, true},
		{"a year unused", BrowserCred{LastUsedAt: t0}, t0.AddDate(1, 0, 0), false, true},
		{"old but used lately", BrowserCred{CreatedAt: t0.AddDate(-1, 0, 0), LastUsedAt: t0}, t0.Add(time.Hour), true, true},
		{"revoked", BrowserCred{LastUsedAt: t0, RevokedAt: &revoked}, t0.Add(2 * time.Hour), false, true},
		{"revoked in the future of a skewed clock", BrowserCred{LastUsedAt: t0, RevokedAt: &revoked}, t0, false, false},
		{"clock went back", BrowserCred{LastUsedAt: t0}, t0.Add(-time.Hour), true, false},
	} {
		if got := tc.c.Active(tc.now); got != tc.active {
			t.Errorf("%s: Active = %v, want %v", tc.name, got, tc.active)
		}
		if got := tc.c.NeedsTouch(tc.now); got != tc.touch {
			t.Errorf("%s: NeedsTouch = %v, want %v", tc.name, got, tc.touch)
		}
	}
}

func TestBrowserCreds(t *testing.T) {
	s, clk, path := openTest(t)
	ctx := context.Background()
	if list, err := s.BrowserCreds(ctx); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("BrowserCreds on an empty registry = %#v, %v", list, err)
	}
	const secret = "tkb_browser-secret-0123456789abcdef"
	for _, bad := range []BrowserCred{
		{ID: "", User: "me", Owner: true, OwnerHash: "h"},
		{ID: "b-1", Owner: true, OwnerHash: "h"},
		{ID: "b-1", User: "me"},                                          // from nothing
		{ID: "b-1", User: "me", Owner: true, OwnerHash: "h", Token: "t"}, // from both
		{ID: "b-1", User: "me", Owner: true},                             // from which owner token?
		{ID: "b-1", User: "me", Token: "t", OwnerHash: "h"},
	} {
		if _, err := s.CreateBrowserCred(ctx, bad, secret); err == nil {
			t.Errorf("CreateBrowserCred(%+v) succeeded", bad)
		}
	}
	if _, err := s.CreateBrowserCred(ctx, BrowserCred{ID: "b-1", User: "me", Owner: true, OwnerHash: "h"}, "short"); err == nil {
		t.Error("a short secret was taken")
	}
	own, err := s.CreateBrowserCred(ctx, BrowserCred{ID: "b-own", User: "me", Owner: true, OwnerHash: "h", Label: "Chromium"}, secret)
	if err != nil {
		t.Fatal(err)
	}
	if own.CreatedAt.IsZero() || !own.LastUsedAt.Equal(own.CreatedAt) || own.RevokedAt != nil {
		t.Fatalf("created %+v", own)
	}
	if _, err := s.CreateBrowserCred(ctx, BrowserCred{ID: "b-own2", User: "me", Owner: true, OwnerHash: "h"}, secret); err == nil {
		t.Error("a second credential with the same secret")
	}
	got, err := s.BrowserCredBySecret(ctx, secret)
	if err != nil || got.ID != "b-own" || !got.Owner || got.OwnerHash != "h" || got.Label != "Chromium" {
		t.Fatalf("BrowserCredBySecret = %+v, %v", got, err)
	}
	if _, err := s.BrowserCredBySecret(ctx, secret+"x"); !errors.Is(err, ErrBrowserCredNotFound) || bytes.Contains([]byte(err.Error()), []byte(secret)) {
		t.Fatalf("unknown secret: %v", err)
	}

	// Made from registry tokens: revoking the token, or removing its
	// user, revokes the credential with it.
	if err := s.CreateUser(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t1", "t2"} {
		if _, err := s.CreateToken(ctx, Token{ID: id, User: "bob"}, "token-secret-"+id+"-0123456789abcdef"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateBrowserCred(ctx, BrowserCred{ID: "b-" + id, User: "bob", Token: id}, "tkb_cred-of-"+id+"-0123456789abcdef"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RevokeToken(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.BrowserCred(ctx, "b-t1"); c.RevokedAt == nil {
		t.Error("revoking token t1 left its browser credential active")
	}
	if c, _ := s.BrowserCred(ctx, "b-t2"); c.RevokedAt != nil {
		t.Error("revoking token t1 revoked t2's browser credential")
	}
	if _, err := s.RemoveUser(ctx, "bob", false); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.BrowserCred(ctx, "b-t2"); c.RevokedAt == nil {
		t.Error("removing bob left his browser credential active")
	}
	if c, _ := s.BrowserCred(ctx, "b-own"); c.RevokedAt != nil {
		t.Error("removing bob revoked the owner's browser credential")
	}

	// Touch moves the sliding expiry; revoke is sticky.
	clk.advance(10 * 24 * time.Hour)
	if err := s.TouchBrowserCred(ctx, "b-own"); err != nil {
		t.Fatal(err)
	}
	c, _ := s.BrowserCred(ctx, "b-own")
	if !c.LastUsedAt.After(own.LastUsedAt.Add(9*24*time.Hour)) || !c.Active(clk.Now().Add(13*24*time.Hour)) {
		t.Errorf("after a touch: %+v", c)
	}
	if err := s.RevokeBrowserCred(ctx, "b-own"); err != nil {
		t.Fatal(err)
	}
	first, _ := s.BrowserCred(ctx, "b-own")
	clk.advance(time.Hour)
	s.RevokeBrowserCred(ctx, "b-own")
	if again, _ := s.BrowserCred(ctx, "b-own"); first.RevokedAt == nil || !again.RevokedAt.Equal(*first.RevokedAt) {
		t.Errorf("revoked at %v, then %v", first.RevokedAt, again.RevokedAt)
	}
	for _, err := range []error{s.RevokeBrowserCred(ctx, "nope"), s.TouchBrowserCred(ctx, "nope")} {
		if !errors.Is(err, ErrBrowserCredNotFound) {
			t.Errorf("unknown id: %v", err)
		}
	}
	if list, _ := s.BrowserCreds(ctx); len(list) != 3 {
		t.Errorf("listed %d credentials, want 3", len(list))
	}
	// Long expired or revoked ones are forgotten when a new one is made.
	clk.advance(BrowserIdle + 31*24*time.Hour)
	if _, err := s.CreateBrowserCred(ctx, BrowserCred{ID: "b-new", User: "me", Owner: true, OwnerHash: "h"}, "tkb_a-newer-secret-0123456789"); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.BrowserCreds(ctx); len(list) != 1 || list[0].ID != "b-new" {
		t.Errorf("after a month and a half: %+v", list)
	}

	// Only the hash is at rest.
	s.Close()
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("newer-secret")) {
			t.Errorf("a credential's secret is in %s", f)
		}
	}
}
