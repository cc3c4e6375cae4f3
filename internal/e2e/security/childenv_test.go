package security

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
)

// envRun is the command of a session that prints its environment between
// two markers and exits; each run (the first, each restore) prints it again.
var envRun = []string{"/bin/sh", "-c", "echo ENV-RUN-START; env; echo ENV-RUN-END"}

// lastEnvRun waits until the session's log holds its n-th whole run of
// envRun and returns that run's variables.
func lastEnvRun(e *e2e.Env, id string, n int) map[string]string {
	e.T.Helper()
	var out []byte
	e2e.WaitFor(e.T, 30*time.Second, "the session to print its environment", func() bool {
		s := e.Session(id)
		if s.State == "running" {
			return false
		}
		out = e2e.Collect(e.T, e.C, id, 0, s.End)
		return bytes.Count(out, []byte("ENV-RUN-END")) >= n
	})
	start := bytes.LastIndex(out, []byte("ENV-RUN-START"))
	end := bytes.LastIndex(out, []byte("ENV-RUN-END"))
	if start < 0 || end < start {
		e.T.Fatalf("no whole environment in the log: %q", e2e.Tail(out, 2000))
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(out[start:end]), "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), "=")
		if ok {
			vars[k] = v
		}
	}
	return vars
}

// checkLoginEnv fails unless vars is a clean login environment with the
// request's own variables: nothing of the server's secrets.
func checkLoginEnv(t *testing.T, what string, vars map[string]string, want map[string]string) {
	t.Helper()
	for _, k := range []string{"AWS_SECRET_ACCESS_KEY", "TK_SECRET_TEST", "TK_CLI_SECRET"} {
		if v, ok := vars[k]; ok {
			t.Errorf("%s: the child has %s=%s", what, k, v)
		}
	}
	for _, k := range []string{"HOME", "USER", "SHELL", "PATH", "LANG", "TERM"} {
		if vars[k] == "" {
			t.Errorf("%s: the child has no %s (%v)", what, k, vars)
		}
	}
	if vars["TERM"] != "xterm-256color" {
		t.Errorf("%s: TERM=%q", what, vars["TERM"])
	}
	for k, v := range want {
		if vars[k] != v {
			t.Errorf("%s: %s=%q, want %q", what, k, vars[k], v)
		}
	}
}

// A session created through the browser listener, by a user's token or by
// the owner's, starts from a clean login environment: the server's own
// variables (a cloud secret among them) are not in it, nor in any restore
// of it, through the browser or the CLI, before or after a server
// restart. A session the CLI's `new` creates still gets the caller's.
func TestChildEnvironment(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	w := newWebEnvWith(t, nil, "AWS_SECRET_ACCESS_KEY=aws-server-secret-1234", "TK_SECRET_TEST=server-secret-5678", "LANG=C.UTF-8")
	w.MustTk("user", "add", "alice")
	alice := w.NewToken("--user", "alice")

	// Both the request's env and set_env reach the child; only set_env is
	// saved for restores (as --env is), env being a caller's passing state.
	explicit := map[string]string{"FROM_SET_ENV": "set-env-value", "FROM_ENV": "env-value"}
	saved := map[string]string{"FROM_SET_ENV": "set-env-value"}
	var byUser, byOwner api.Session
	w.As(alice.Secret).API("POST", "/api/sessions", map[string]any{
		"name": "alice-env", "command": envRun, "cwd": "/", "no_shell_integration": true,
		"env": []string{"FROM_ENV=env-value"}, "set_env": []string{"FROM_SET_ENV=set-env-value"},
	}, 201, &byUser)
	w.API("POST", "/api/sessions", map[string]any{
		"name": "owner-env", "command": envRun, "cwd": "/", "no_shell_integration": true,
	}, 201, &byOwner)
	checkLoginEnv(t, "created by a user token", lastEnvRun(w.Env, byUser.ID, 1), explicit)
	checkLoginEnv(t, "created by the owner token", lastEnvRun(w.Env, byOwner.ID, 1), nil)

	// A restore through the browser.
	w.As(alice.Secret).API("POST", "/api/sessions/"+byUser.ID+"/restore", nil, 200, nil)
	checkLoginEnv(t, "restored by a user token", lastEnvRun(w.Env, byUser.ID, 2), saved)

	// After a server restart, a restore by the owner's CLI, whose own
	// environment carries a secret too, still starts clean.
	w.Srv.Cmd.Process.Signal(syscall.SIGTERM)
	w.Srv.Wait()
	w.Srv = nil
	w.StartServer()
	cli := exec.Command(e2e.TkBin, "--state-dir", w.Dir, "--no-autostart", "restore", byUser.ID)
	cli.Env = append(os.Environ(), "TK_CLI_SECRET=cli-secret")
	if out, err := cli.CombinedOutput(); err != nil {
		t.Fatalf("restore after a server restart: %v: %s", err, out)
	}
	checkLoginEnv(t, "restored by the CLI after a server restart", lastEnvRun(w.Env, byUser.ID, 3), saved)

	// The CLI's new passes its caller's environment on, as before.
	cli = exec.Command(e2e.TkBin, "--state-dir", w.Dir, "--no-autostart", "new", "--no-shell-integration", "--")
	cli.Args = append(cli.Args, envRun...)
	cli.Env = append(os.Environ(), "TK_CLI_SECRET=cli-secret")
	out, err := cli.Output()
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	if v := lastEnvRun(w.Env, strings.TrimSpace(string(out)), 1)["TK_CLI_SECRET"]; v != "cli-secret" {
		t.Errorf("a session of the CLI's new lacks its caller's variable (TK_CLI_SECRET=%q)", v)
	}
}

// Wherever a writable token or a user is made, the CLI and the API say
// what it can do; a read-only token is not said to.
func TestWritableTokenWarning(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	const warning = "a writable token can do anything the owner's shell can"
	if _, errs, code := e.Tk("user", "add", "alice"); code != 0 || !strings.Contains(errs, warning) {
		t.Errorf("user add: exit %d, stderr %q; want the warning", code, errs)
	}
	if _, errs, code := e.Tk("token", "create", "--user", "alice"); code != 0 || !strings.Contains(errs, warning) {
		t.Errorf("token create: exit %d, stderr %q; want the warning", code, errs)
	}
	if out, _, code := e.Tk("token", "create", "--user", "alice", "--json"); code != 0 || !strings.Contains(out, warning) {
		t.Errorf("token create --json: exit %d, %q; want the warning", code, out)
	}
	if out, errs, code := e.Tk("token", "create", "--user", "alice", "--read-only"); code != 0 || strings.Contains(out+errs, warning) {
		t.Errorf("token create --read-only: exit %d, %q %q; want no warning", code, out, errs)
	}
	for _, help := range [][]string{{"token", "create", "--help"}, {"user", "add", "--help"}, {"user", "--help"}, {"token", "--help"}} {
		if out, _, _ := e.Tk(help...); !strings.Contains(out, warning) {
			t.Errorf("termkeep %s does not say it:\n%s", strings.Join(help, " "), out)
		}
	}
}
