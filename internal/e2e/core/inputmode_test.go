package core

import (
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
)

// A session's input_mode follows its pty: echo and line editing at a
// plain shell's prompt, echo off while `stty -echo` holds, as a password
// prompt has it.
func TestInputModeInSessionJSON(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--", "sh"))
	mode := func(want api.InputMode) func() bool {
		return func() bool { m := e.Session(id).InputMode; return m != nil && *m == want }
	}
	e2e.WaitFor(t, 10*time.Second, "echo and line editing at the prompt", mode(api.InputMode{Known: true, Echo: true, Canonical: true}))
	e.MustTk("send", id, "stty -echo")
	e2e.WaitFor(t, 10*time.Second, "echo off", mode(api.InputMode{Known: true, Echo: false, Canonical: true}))
	e.MustTk("send", id, "stty echo")
	e2e.WaitFor(t, 10*time.Second, "echo back on", mode(api.InputMode{Known: true, Echo: true, Canonical: true}))
}
