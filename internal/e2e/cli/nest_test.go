package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// An attach to the session it runs in is refused with one line and exit
// 2, as tmux refuses to nest; TERMKEEP_SESSION carried into another
// terminal refuses nothing there.
func TestAttachRefusesNesting(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	// The attach waits for a line typed once the session is registered: a
	// child can start before its session's row is written.
	id := strings.TrimSpace(e.MustTk("new", "--name", "self", "--", "sh", "-c",
		fmt.Sprintf("read go; %s --state-dir %s attach self; echo EXIT=$?; exec sleep 600", e2e.TkBin, e.Dir)))
	e.MustTk("send", "self", "go")
	if out, errs, code := e.Tk("wait", "self", "--from", "start", "--output", "EXIT=", "--timeout", "20s"); code != 0 {
		t.Fatalf("the attach inside the session did not end (%d): %s %s", code, out, errs)
	}
	scr := e.MustTk("capture", "self", "--raw")
	want := "termkeep: this terminal is session self's own: attach from another terminal\r\nEXIT=2\r\n"
	if !strings.Contains(scr, want) {
		t.Fatalf("the attach inside its own session was not refused with exit 2 and one line:\nwant %q\ngot  %q", want, scr)
	}

	// The variable of the session, in a terminal that is not its own.
	t.Setenv("TERMKEEP_SESSION", id)
	a := startAttach(t, e, "self", false)
	a.waitOutput("EXIT=2")
	e2e.WaitFor(t, 10*time.Second, "the attach", func() bool { return e.Session("self").Viewers == 1 })
	a.typ("\x1c")
	if code := a.exitCode(); code != 0 {
		t.Fatalf("attach from another terminal with TERMKEEP_SESSION set: exit %d: %q", code, e2e.Tail(a.bytes(), 300))
	}
}
