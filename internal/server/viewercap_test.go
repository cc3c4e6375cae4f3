package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/api"
	"termkeep/internal/client"
)

func TestViewerCapCounts(t *testing.T) {
	var c viewerCap
	r1, err1 := c.take("t1", 2)
	r2, err2 := c.take("t1", 2)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, err := c.take("t1", 2); err == nil || !strings.Contains(err.Error(), "2 viewers") {
		t.Fatalf("a third viewer of a cap of 2: %v", err)
	}
	if r, err := c.take("t2", 2); err != nil {
		t.Fatalf("another token: %v", err)
	} else {
		r()
	}
	r1()
	r1() // once only
	if r, err := c.take("t1", 2); err != nil {
		t.Fatalf("after one left: %v", err)
	} else {
		r()
	}
	r2()
	if len(c.open) != 0 {
		t.Errorf("counts left behind: %v", c.open)
	}
}

// A share link's viewers past the cap are refused with 429 and a
// sentence, before the upgrade; a place freed is taken again; other links
// and the owner are not counted against it; the owner has a cap of its
// own, ownerViewers times a token's.
func TestViewerCapPerToken(t *testing.T) {
	ts := newLiveServerWith(t, func(c *Config) { c.MaxViewersPerToken = 2 })
	ctx := context.Background()
	c := client.New(ts.dir)
	sess := liveSession(t, ts, c, "capped")
	link, err := c.CreateToken(ctx, api.TokenRequest{Session: sess.ID, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.CreateToken(ctx, api.TokenRequest{Session: sess.ID, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	url := "ws" + strings.TrimPrefix(ts.base, "http") + "/ws/sessions/" + sess.ID
	dial := func(secret string) (*websocket.Conn, *http.Response, error) {
		dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		v, resp, err := websocket.Dial(dctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + secret}}})
		if err == nil {
			if _, _, err := v.Read(dctx); err != nil {
				t.Fatalf("welcome: %v", err)
			}
			t.Cleanup(func() { v.CloseNow() })
		}
		return v, resp, err
	}
	must := func(secret string) *websocket.Conn {
		t.Helper()
		v, _, err := dial(secret)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	first := must(link.Secret)
	must(link.Secret)
	_, resp, err := dial(link.Secret)
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a third viewer of the link: %v %v", err, resp)
	}
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "already has 2 viewers open") {
		t.Errorf("refused with %s", body)
	}
	must(other.Secret)
	// The owner has ownerViewers times a token's cap.
	for range 2 * ownerViewers {
		must(ts.token)
	}
	if _, resp, err := dial(ts.token); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("an owner's viewer past its cap: %v %v", err, resp)
	}
	first.CloseNow()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, _, err := dial(link.Secret)
		if err == nil {
			v.CloseNow()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the place the first viewer left was not freed: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // the server notices the close on its own time
	}
}
