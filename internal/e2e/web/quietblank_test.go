package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
)

// TestQuietNeedsOutput: a session that has printed nothing (a blank
// screen) is not quiet however long it waits, and no session.quiet event
// says it is: quiet_since is "once it has printed".
func TestQuietNeedsOutput(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.ServerEnv = []string{"TERMKEEP_QUIET_AFTER=1s"} // off by default in these tests (e2e.Main)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--name", "blank", "--", "sleep", "60"))
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		s, err := e.C.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.QuietSince != nil {
			t.Fatalf("a session that printed nothing (end_offset %d) is quiet since %v", s.End, s.QuietSince)
		}
		time.Sleep(200 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.C.Events(ctx, 0, false, func(x api.Event) error {
		if x.Kind == "session.quiet" && x.Session == id {
			t.Errorf("a session.quiet event for a session that printed nothing: %s", x.Detail)
		}
		return nil
	})
	e.MustTk("kill", id)
}
