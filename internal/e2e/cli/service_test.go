package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// fakeSystemctl plays a systemd user manager for one unit, well enough to
// run it: start runs the unit's ExecStart with its environment file, as
// systemd would, and stop sends SIGTERM to that process alone, as
// KillMode=process does. loginctl answers for linger.
const fakeSystemctl = `#!/bin/sh
echo "systemctl $*" >> "$TK_FAKE/calls"
unit="$XDG_CONFIG_HOME/systemd/user/termkeep.service"
pid() { p=$(cat "$TK_FAKE/pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null && echo "$p"; }
stop() {
	p=$(pid) || return 0
	kill -TERM "$p"
	while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
	rm -f "$TK_FAKE/pid"
}
start() {
	exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
	env_file=$(sed -n 's/^EnvironmentFile=-//p' "$unit")
	( set -a; . "$env_file"; set +a; exec setsid $exec_start ) >>"$TK_FAKE/server.log" 2>&1 </dev/null &
	echo $! > "$TK_FAKE/pid"
}
case "$2" in
show)
	if [ -f "$unit" ] && [ -f "$TK_FAKE/loaded" ]; then echo LoadState=loaded; else echo LoadState=not-found; fi
	if [ -f "$TK_FAKE/enabled" ]; then echo UnitFileState=enabled; else echo UnitFileState=disabled; fi
	if p=$(pid); then echo ActiveState=active; echo SubState=running; echo MainPID=$p; else echo ActiveState=inactive; echo MainPID=0; fi ;;
daemon-reload) touch "$TK_FAKE/loaded" ;;
enable) touch "$TK_FAKE/enabled" ;;
start) pid >/dev/null || start ;;
restart) stop; start ;;
disable) rm -f "$TK_FAKE/enabled"; [ "$3" = --now ] && stop ;;
esac
exit 0
`

const fakeLoginctl = `#!/bin/sh
echo "loginctl $*" >> "$TK_FAKE/calls"
case "$1" in
show-user) if [ -f "$TK_FAKE/linger" ]; then echo yes; else echo no; fi ;;
enable-linger) touch "$TK_FAKE/linger" ;;
esac
`

// copyFile writes a copy of src at dst through a new file and a rename,
// as an install of a new build does: the old file, which a running
// server may execute, is replaced, not written over.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst+".new", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dst+".new", dst); err != nil {
		t.Fatal(err)
	}
}

// termkeep service install, status and uninstall against a user manager
// played by scripts that really run the unit: install stops the server
// the CLI started before it and the unit's server takes its session over; a second install changes nothing; an
// install after a new build restarts the server alone, and a session
// started before it keeps its process and its output; uninstall stops the
// server and leaves the session running.
func TestServiceInstallUpgradeUninstall(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	// GORACE: a binary built with -race sleeps a second at exit unless told not to.
	noSleep := []string{"GORACE=atexit_sleep_ms=0"}
	e.ServerEnv = append(e.ServerEnv, noSleep...)
	tmp := t.TempDir()
	fake, bin, cfg := filepath.Join(tmp, "fake"), filepath.Join(tmp, "bin"), filepath.Join(tmp, "config")
	for _, d := range []string{fake, bin, cfg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(fake, "systemctl"), []byte(fakeSystemctl), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "loginctl"), []byte(fakeLoginctl), 0o755); err != nil {
		t.Fatal(err)
	}
	tk := filepath.Join(bin, "termkeep")
	// Links: the upgrade below makes a new file at tk.
	for _, name := range []string{"termkeep", "termkeep-server", "termkeep-holder"} { // as make install puts them
		if err := os.Link(filepath.Join(filepath.Dir(e2e.TkBin), name), filepath.Join(bin, name)); err != nil {
			copyFile(t, filepath.Join(filepath.Dir(e2e.TkBin), name), filepath.Join(bin, name))
		}
	}
	t.Cleanup(func() { // the fake's server, should the test stop early
		if b, err := os.ReadFile(filepath.Join(fake, "pid")); err == nil {
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	})
	env := append(os.Environ(), append(noSleep, "PATH="+fake+":"+os.Getenv("PATH"), "XDG_CONFIG_HOME="+cfg, "TK_FAKE="+fake, "LANG=C.UTF-8")...)
	svc := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(tk, append([]string{"--state-dir", e.Dir, "service"}, args...)...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), errb.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), 0
	}
	mustSvc := func(args ...string) string {
		t.Helper()
		out, errs, code := svc(args...)
		if code != 0 {
			t.Fatalf("termkeep service %v: exit %d: %s%s", args, code, out, errs)
		}
		return out
	}
	contains := func(what, out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Fatalf("%s lacks %q:\n%s", what, w, out)
			}
		}
	}
	health := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := e.C.Health(ctx)
		return err == nil
	}

	for _, args := range [][]string{{}, {"bogus"}, {"install", "extra"}, {"status", "extra"}} {
		if _, errs, code := svc(args...); code != 2 || !strings.Contains(errs, "install, uninstall or status") {
			t.Fatalf("termkeep service %q: exit %d %q; want 2 and the verbs", args, code, errs)
		}
	}

	// A server the CLI started before the service, with a session.
	e.StartServer()
	outside := e.Srv.Cmd.Process.Pid
	newOut, errs, code := e.TkEnv(noSleep, "", "new", "--name", "svc", "--no-shell-integration", "--", "sh", "-c", "while :; do echo tick; sleep 0.1; done")
	if code != 0 {
		t.Fatalf("new: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(newOut)
	before := e.Session(id)
	if before.Pid == nil || before.HolderProtocol != wire.Version {
		t.Fatalf("%+v; want a pid, and holder_protocol %d", before, wire.Version)
	}

	out := mustSvc("install", "--", "--listen", "off")
	unitPath := filepath.Join(cfg, "systemd", "user", "termkeep.service")
	envPath := filepath.Join(cfg, "termkeep", "service.env")
	contains("install's output", out, "wrote "+envPath+" (PATH, LANG", "wrote "+unitPath, "started the server (pid", "linger on",
		"stopped the termkeep server that ran outside the service (pid "+strconv.Itoa(outside)+"); sessions keep running")
	unit, _ := os.ReadFile(unitPath)
	contains("the unit", string(unit), "ExecStart="+tk+" serve --state-dir "+e.Dir+" --listen off\n", "KillMode=process", "Restart=on-failure", "EnvironmentFile=-"+envPath)
	e2e.WaitFor(t, 20*time.Second, "the service's server to answer", health)
	if s := e.Session(id); s.State != "running" || s.Pid == nil || *s.Pid != *before.Pid {
		t.Fatalf("after the service's server took over: %+v; want running, pid %d as before", s, *before.Pid)
	}

	out = mustSvc("install", "--", "--listen", "off")
	contains("a second install's output", out, "nothing to change")

	// A new build, installed at the same path (the server runs
	// termkeep-server, which the lean termkeep hands serve to).
	copyFile(t, e2e.TkBin, tk)
	copyFile(t, filepath.Join(filepath.Dir(e2e.TkBin), "termkeep-server"), filepath.Join(bin, "termkeep-server"))
	out = mustSvc("install", "--", "--listen", "off")
	contains("the upgrade's output", out, "restarted the server (pid", "sessions keep running")
	e2e.WaitFor(t, 20*time.Second, "the new server to answer", health)
	after := e.Session(id)
	if after.State != "running" || after.Pid == nil || *after.Pid != *before.Pid {
		t.Fatalf("after the upgrade: %+v; want running, pid %d as before", after, *before.Pid)
	}
	if _, errs, code := e.TkEnv(noSleep, "", "wait", id, "--output", "tick", "--timeout", "10s"); code != 0 {
		t.Fatalf("no output after the upgrade: %s", errs)
	}

	out = mustSvc("status")
	contains("status", out, unitPath+" (installed, enabled)", "active (running)", "binary:      "+tk, "environment: "+envPath+" (PATH, LANG", "linger:      on")

	out = mustSvc("uninstall")
	contains("uninstall's output", out, "sessions keep running", "removed "+unitPath)
	if health() {
		t.Fatal("the server still answers after uninstall")
	}
	if err := syscall.Kill(*before.Pid, 0); err != nil {
		t.Fatalf("the session's process is gone after uninstall: %v", err)
	}
	for _, p := range []string{unitPath, envPath} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s: %v; want it removed", p, err)
		}
	}
	calls, _ := os.ReadFile(filepath.Join(fake, "calls"))
	if n := strings.Count(string(calls), "systemctl --user restart"); n != 1 {
		t.Fatalf("%d restarts; want the upgrade's alone:\n%s", n, calls)
	}
}
