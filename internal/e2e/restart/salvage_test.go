package restart

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
)

// damageMeta writes a NUL over byte at(b) of session id's meta.json b.
func damageMeta(t *testing.T, e *e2e.Env, id string, at func(b []byte) int) {
	t.Helper()
	p := filepath.Join(e.Dir, "sessions", id, sessiondir.MetaFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[at(b)] = 0
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sessiondir.ReadMeta(filepath.Dir(p)); err == nil {
		t.Fatalf("meta.json of %s still reads", id)
	}
}

// dropRegistry deletes the registry of a stopped server.
func dropRegistry(t *testing.T, e *e2e.Env) {
	t.Helper()
	db := statedir.Dir(e.Dir).DB()
	for _, sfx := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(db + sfx); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// listed is the session ls --json lists with id, or fails the test.
func listed(t *testing.T, e *e2e.Env, id string) api.Session {
	t.Helper()
	var list []api.Session
	if err := json.Unmarshal([]byte(e.MustTk("ls", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(s api.Session) bool { return s.ID == id })
	if i < 0 {
		t.Fatalf("ls does not list session %s", id)
	}
	return list[i]
}

// A session whose meta.json is damaged (a NUL in its middle) and whose
// registry is gone is made again from its directory (the id), its status
// record (holder pid, how and when it ended) and its log (size, end), by
// a server's adoption and by doctor --rebuild alike: ls lists it with
// what is unknown marked, and capture --raw and export reach its log.
// Before, it was missing from ls, capture and export, doctor only warned
// ("cannot be adopted") and doctor --rebuild exited 0 without it.
func TestDamagedMetaIsRecovered(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	const n = 600 << 10
	ended := e.NewWriter("ended", 21, n, 0, false, "--env", "TK_CODE=3")
	if _, errs, code := e.Tk("wait", ended, "--exit", "--timeout", "60s"); code != 3 {
		t.Fatalf("wait: exit %d %s", code, errs)
	}
	live := strings.TrimSpace(e.MustTk("new", "--name", "live", "--", "cat"))
	e.MustTk("send", live, "before-the-damage")
	e.MustTk("wait", live, "--from", "start", "--output", "before-the-damage", "--timeout", "20s")
	e.ShutdownServer()
	// The ended one in the middle (its environment: the command before it
	// is kept), the live one in its command.
	damageMeta(t, e, ended, func(b []byte) int { return len(b) / 2 })
	damageMeta(t, e, live, func(b []byte) int { return bytes.Index(b, []byte(`"cat"`)) + 2 })
	pattern := e2e.Pattern(21, n)

	check := func(how string) {
		t.Helper()
		s := listed(t, e, ended)
		if s.State != "exited" || s.ExitCode == nil || *s.ExitCode != 3 || s.End != n {
			t.Fatalf("%s: the ended session is %s (exit %v), end %d; want exited(3) at %d", how, s.State, s.ExitCode, s.End, n)
		}
		if !slices.Equal(s.Command, []string{e2e.SelfBin}) || len(s.Unknown) != 0 {
			t.Fatalf("%s: the ended session's command %q, unknown %v; want its command, kept from before the damage", how, s.Command, s.Unknown)
		}
		if raw, errs, code := e.Tk("capture", "--raw", ended); code != 0 || raw != string(pattern) {
			t.Fatalf("%s: capture --raw: exit %d, %d of %d bytes: %s", how, code, len(raw), n, errs)
		}
		file := filepath.Join(t.TempDir(), "raw")
		if _, errs, code := e.Tk("export", ended, "-f", "raw", "-o", file); code != 0 {
			t.Fatalf("%s: export -f raw: exit %d: %s", how, code, errs)
		}
		if b, _ := os.ReadFile(file); string(b) != string(pattern) {
			t.Fatalf("%s: export -f raw: %d of %d bytes", how, len(b), n)
		}
		if out := e.MustTk("ls"); !strings.Contains(out, "(unknown)") {
			t.Fatalf("%s: ls does not mark the unknown command:\n%s", how, out)
		}
		l := listed(t, e, live)
		if l.State != "running" || l.Pid == nil {
			t.Fatalf("%s: the live session is %s", how, l.State)
		}
		if !slices.Equal(l.Unknown, []string{"command", "cwd"}) || len(l.Command) != 0 || l.Cwd != "" {
			t.Fatalf("%s: the live session's command %q and cwd %q, unknown %v; want both marked unknown", how, l.Command, l.Cwd, l.Unknown)
		}
		e.MustTk("send", live, "after-"+how)
		if _, errs, code := e.Tk("wait", live, "--from", "start", "--output", "after-"+how, "--timeout", "20s"); code != 0 {
			t.Fatalf("%s: the live session does not echo: %s", how, errs)
		}
	}

	// A server adopts both.
	dropRegistry(t, e)
	e.StartServer()
	check("adopted")
	e.ShutdownServer()

	// doctor --rebuild recovers both.
	dropRegistry(t, e)
	out, errs, code := e.Tk("doctor", "--rebuild")
	t.Logf("doctor --rebuild:\n%s%s", out, errs)
	if code != 0 || strings.Contains(out, "not recovered") || !strings.Contains(out, "2 session(s) recovered") {
		t.Fatalf("doctor --rebuild: exit %d:\n%s%s", code, out, errs)
	}
	e.StartServer()
	check("rebuilt")
}
