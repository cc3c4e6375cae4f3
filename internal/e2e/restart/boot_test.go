package restart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/bootid"
	"termkeep/internal/e2e"
)

// A reboot told by the boot id: sessions run in boot A (two running, one
// with --auto-restore; one that exited and one that was killed, both with
// --auto-restore), then everything is SIGKILLed and the machine comes back
// as boot B. The next server says the machine restarted (its log, one
// machine.restarted event naming the two running sessions, their
// session.interrupted events with cause machine_restarted) and brings back
// the running --auto-restore session alone; the exited and closed ones
// stay as they were. A second server of boot B says nothing more, and
// `restore --all` brings back the other interrupted one only.
func TestRebootByBootID(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	boot := filepath.Join(t.TempDir(), "boot_id")
	setBoot := func(id string) {
		t.Helper()
		if err := os.WriteFile(boot, []byte(id+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	setBoot("boot-a")
	e.ServerEnv = append(e.ServerEnv, bootid.EnvVar+"="+boot)
	e.StartServer()

	auto := strings.TrimSpace(e.MustTk("new", "--name", "auto", "--auto-restore", "--no-shell-integration", "--", "sh", "-c", "echo run-$$; exec sleep 600"))
	manual := strings.TrimSpace(e.MustTk("new", "--name", "manual", "--no-shell-integration", "--", "sh", "-c", "echo run-$$; exec sleep 600"))
	exited := strings.TrimSpace(e.MustTk("new", "--name", "exited", "--auto-restore", "--no-shell-integration", "--", "sh", "-c", "exit 3"))
	closed := strings.TrimSpace(e.MustTk("new", "--name", "closed", "--auto-restore", "--no-shell-integration", "--", "sleep", "600"))
	for _, id := range []string{auto, manual} {
		if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "run-", "--timeout", "20s"); code != 0 {
			t.Fatalf("wait: %s", errs)
		}
	}
	if _, errs, code := e.Tk("wait", exited, "--exit", "--timeout", "20s"); code != 3 {
		t.Fatalf("wait --exit: exit %d, want 3: %s", code, errs)
	}
	e.MustTk("kill", closed)
	want := map[string]string{auto: "running", manual: "running", exited: "exited", closed: "closed"}
	for id, st := range want {
		e2e.WaitFor(t, 20*time.Second, "session "+id+" to be "+st+" before the reboot", func() bool { return e.Session(id).State == st })
	}

	killEverything(e)
	setBoot("boot-b")
	e.StartServer()

	e2e.WaitFor(t, 20*time.Second, "the --auto-restore session to run again", func() bool { return e.Session(auto).State == "running" })
	if _, errs, code := e.Tk("wait", auto, "--from", "start", "--output", "after the machine restarted", "--timeout", "20s"); code != 0 {
		t.Fatalf("no restore line naming the restart: %s\n%s", errs, e.MustTk("capture", auto))
	}
	m := e.Session(manual)
	if m.State != "interrupted" || m.Cause != "machine_restarted" || m.CauseText != "the machine restarted" || !m.Restorable ||
		!strings.Contains(m.Reason, "the machine restarted") {
		t.Fatalf("the session without --auto-restore: %+v; want interrupted by the machine's restart, restorable", m)
	}
	if out := e.MustTk("ls"); !strings.Contains(out, "interrupted: the machine restarted") {
		t.Fatalf("ls does not say the machine restarted:\n%s", out)
	}
	for _, id := range []string{exited, closed} {
		if s := e.Session(id); s.State != want[id] || s.Restorable {
			t.Fatalf("%s: %+v; want %s as before, not restorable", id, s, want[id])
		}
	}

	restarts := func() []api.Event {
		t.Helper()
		var out []api.Event
		for _, ev := range e.Events() {
			if ev.Kind == "machine.restarted" {
				out = append(out, ev)
			}
		}
		return out
	}
	evs := restarts()
	if len(evs) != 1 {
		t.Fatalf("machine.restarted events: %+v; want one", evs)
	}
	var d struct {
		BootID  string   `json:"boot_id"`
		Earlier []string `json:"earlier_boot_ids"`
		IDs     []string `json:"sessions"`
	}
	if err := json.Unmarshal(evs[0].Detail, &d); err != nil {
		t.Fatal(err)
	}
	slices.Sort(d.IDs)
	two := []string{auto, manual}
	slices.Sort(two)
	if d.BootID != "boot-b" || !slices.Equal(d.Earlier, []string{"boot-a"}) || !slices.Equal(d.IDs, two) {
		t.Fatalf("machine.restarted says %+v; want boot-b after boot-a, sessions %v", d, two)
	}
	for _, id := range two {
		_, all := e.SessionEvents(id)
		var causes []string
		for _, ev := range all {
			if ev.Kind == "session.interrupted" {
				var x struct{ Cause string }
				json.Unmarshal(ev.Detail, &x)
				causes = append(causes, x.Cause)
			}
		}
		if !slices.Equal(causes, []string{"machine_restarted"}) {
			t.Fatalf("session %s's interrupted events have causes %q; want one, machine_restarted", id, causes)
		}
	}
	log, _ := os.ReadFile(filepath.Join(e.Dir, "server.log"))
	if !strings.Contains(string(log), "the machine restarted") {
		t.Fatalf("the server's log does not say the machine restarted:\n%s", e2e.Tail(log, 3000))
	}

	out, errs, code := e.Tk("restore", "--all")
	if code != 0 || strings.TrimSpace(out) != manual {
		t.Fatalf("restore --all: exit %d, %q, %q; want %s alone restored", code, out, errs, manual)
	}
	for id, st := range map[string]string{manual: "running", exited: "exited", closed: "closed"} {
		if got := e.Session(id).State; got != st {
			t.Fatalf("after restore --all, %s is %s, want %s", id, got, st)
		}
	}

	// Another server of the same boot has nothing new to say.
	e.KillServer()
	e.StartServer()
	if evs := restarts(); len(evs) != 1 {
		t.Fatalf("after a second server of boot-b, machine.restarted events: %+v; want still one", evs)
	}
}
