package remote

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// host is the machine the tests reach over ssh: this one.
const host = "127.0.0.1"

// tk runs the local termkeep with TERMKEEP_SSH and TERMKEEP_REMOTE_BIN.
func tk(t *testing.T, ssh, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(e2e.TkBin, args...)
	cmd.Env = append(os.Environ(), "TERMKEEP_SSH="+ssh, "TERMKEEP_REMOTE_BIN="+bin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run termkeep %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// mustTk is tk that fails the test unless termkeep succeeds.
func mustTk(t *testing.T, ssh, bin string, args ...string) string {
	t.Helper()
	out, errs, code := tk(t, ssh, bin, args...)
	if code != 0 {
		t.Fatalf("termkeep %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

// attachPane runs attach HOST:SESSION in a tmux pane of 80x24, with no
// ssh agent.
func attachPane(t *testing.T, ssh, bin, session string) *e2e.Tmux {
	t.Helper()
	return e2e.StartTmux(t, 80, 24, 20000, fmt.Sprintf("SSH_AUTH_SOCK= TERMKEEP_SSH=%s TERMKEEP_REMOTE_BIN=%s %s attach %s:%s; echo ATTACH-EXIT $?",
		shq(ssh), shq(bin), e2e.TkBin, host, session))
}

// An ssh that needs a passphrase asks for it on attach's terminal before
// attach takes it; when a reconnect in batch mode is refused for want of
// it, attach says so, and on a key lends ssh the terminal to ask again.
func TestRemotePassphrase(t *testing.T) {
	t.Parallel()
	s := startSSHD(t)
	e := e2e.NewEnv(t)
	bin := remoteBin(t, e)
	mustTk(t, s.SSH, bin, "new", host+":", "--name", "sh", "--", "/bin/sh")
	p := attachPane(t, s.LockedSSH, bin, "sh")
	p.WaitShows("Enter passphrase", 20*time.Second)
	p.SendKeys(lockedPassphrase, "Enter")
	e2e.WaitFor(t, 20*time.Second, "attach to connect", func() bool { return e.Session("sh").Viewers == 1 })
	p.SendKeys("echo one-$((1+1))", "Enter")
	p.WaitShows("one-2", 30*time.Second)

	pids := sshPids(bin)
	if len(pids) != 1 {
		t.Fatalf("attach runs %d ssh processes for this test, not one: %v", len(pids), pids)
	}
	syscall.Kill(pids[0], syscall.SIGKILL)
	p.WaitShows("needs a password or a passphrase to reconnect", 20*time.Second)
	p.SendKeys("Z")
	p.WaitShows("Enter passphrase", 20*time.Second)
	p.SendKeys(lockedPassphrase, "Enter")
	e2e.WaitFor(t, 20*time.Second, "attach to reconnect", func() bool {
		now := sshPids(bin)
		return len(now) == 1 && now[0] != pids[0] && e.Session("sh").Viewers == 1
	})
	p.SendKeys("echo two-$((2+2))", "Enter")
	p.WaitShows("two-4", 30*time.Second)
	if got := e.MustTk("capture", "sh"); strings.Contains(got, "Z") {
		t.Errorf("the key that answered attach reached the session:\n%s", got)
	}
}

// new, ls and attach reach a session on another machine: the session is
// started in the remote home with what it was given, listed, attached
// to; what is typed runs in it, and the detach key detaches.
func TestRemoteNewLsAttach(t *testing.T) {
	t.Parallel()
	s := startSSHD(t)
	e := e2e.NewEnv(t)
	bin := remoteBin(t, e)
	id := strings.TrimSpace(mustTk(t, s.SSH, bin, "new", host+":", "--name", "sh", "--env", "TK_GREET=it's", "--", "/bin/sh"))
	if len(id) != 8 {
		t.Fatalf("new printed %q, not a session id", id)
	}
	sess := e.Session("sh")
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if home := u.HomeDir; sess.ID != id || sess.Cwd != home {
		t.Errorf("the remote session is %s in %s; want %s in the remote home %s", sess.ID, sess.Cwd, id, u.HomeDir)
	}
	if out := mustTk(t, s.SSH, bin, "ls", host+":"); !strings.Contains(out, id) || !strings.Contains(out, "/bin/sh") {
		t.Errorf("ls %s: does not list %s:\n%s", host+":", id, out)
	}
	p := attachPane(t, s.SSH, bin, "sh")
	e2e.WaitFor(t, 20*time.Second, "attach to connect", func() bool { return e.Session("sh").Viewers == 1 })
	p.SendKeys(`echo "$TK_GREET" $((6*7))`, "Enter")
	p.WaitShows("it's 42", 30*time.Second)
	// The session follows the local window's size.
	p.Resize(100, 30)
	e2e.WaitFor(t, 20*time.Second, "the session to take the window's size", func() bool {
		s := e.Session("sh")
		return s.Cols == 100 && s.Rows == 30
	})

	// The remote server shut down on purpose: attach's reconnects start
	// none (as a local attach's do); a command the user runs does, and
	// attach is back.
	mustTk(t, s.SSH, bin, "--state-dir", e.Dir, "shutdown") // there, as if typed there
	e2e.WaitFor(t, 20*time.Second, "the server to stop", func() bool { _, err := e.C.Health(context.Background()); return err != nil })
	time.Sleep(2 * time.Second) // attach's reconnects meanwhile must start nothing
	if _, err := e.C.Health(context.Background()); err == nil {
		t.Fatal("attach's reconnect started the server shut down on purpose")
	}
	mustTk(t, s.SSH, bin, "ls", host+":")
	e2e.WaitFor(t, 30*time.Second, "attach to reconnect", func() bool { return e.Session("sh").Viewers == 1 })
	p.SendKeys("echo back-$((3*3))", "Enter")
	p.WaitShows("back-9", 30*time.Second)
	p.SendKeys(`C-\`)
	p.WaitShows("ATTACH-EXIT 0", 30*time.Second)
	if rows := strings.Join(p.Capture(false), "\n"); !strings.Contains(rows, "detached from "+host+":sh") {
		t.Errorf("the detach said nothing of it:\n%s", rows)
	}
}

// Attach over ssh survives the death of ssh and of the remote server
// while the session prints 3,000 numbered lines at 200 a second: it comes
// back by itself and the pane holds every line once, in order. (A link
// that goes silent is drop_test.go's.)
func TestRemoteAttachSurvives(t *testing.T) {
	t.Parallel()
	s := startSSHD(t)
	for _, fault := range []string{"ssh killed", "server killed"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			e, bin, p := numbersPane(t, s, s.SSH)
			killed := time.Now()
			switch fault {
			case "ssh killed":
				pids := sshPids(bin)
				if len(pids) != 1 {
					t.Fatalf("attach runs %d ssh processes for this test, not one: %v", len(pids), pids)
				}
				syscall.Kill(pids[0], syscall.SIGKILL)
				e2e.WaitFor(t, 20*time.Second, "attach to reconnect", func() bool {
					now := sshPids(bin)
					return len(now) == 1 && now[0] != pids[0] && e.Session("numbers").Viewers == 1
				})
			case "server killed":
				h, err := e.C.Health(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				syscall.Kill(h.Pid, syscall.SIGKILL)
				e2e.WaitFor(t, 30*time.Second, "attach to reconnect to a new server", func() bool {
					now, err := e.C.Health(context.Background())
					return err == nil && now.Pid != h.Pid && e.Session("numbers").Viewers == 1
				})
			}
			allNumbers(t, p, fault+": back in "+time.Since(killed).Round(time.Millisecond).String())
		})
	}
}

// numberLines is how many lines numbersPane's session prints.
const numberLines = 3000

// numbersPane starts a remote session that prints numberLines numbered
// lines at 200 a second, attaches to it with ssh command ssh in a tmux
// pane, and returns once the pane shows line 400.
func numbersPane(t *testing.T, s *sshd, ssh string) (*e2e.Env, string, *e2e.Tmux) {
	t.Helper()
	e := e2e.NewEnv(t)
	bin := remoteBin(t, e)
	id := strings.TrimSpace(mustTk(t, s.SSH, bin, "new", host+":", "--name", "numbers", "--size", "80x24",
		"--env", "TK_CHILD=numbered", "--env", "TK_RATE=200", "--env", "TK_LINES="+strconv.Itoa(numberLines), "--", e2e.SelfBin))
	e.WaitRaw(id)
	p := attachPane(t, ssh, bin, "numbers")
	e2e.WaitFor(t, 20*time.Second, "attach to connect", func() bool { return e.Session("numbers").Viewers == 1 })
	p.SendKeys("g")
	e2e.WaitFor(t, 20*time.Second, "line 400 on the pane", func() bool { return e2e.CountNumbered(p.Capture(false)).Last >= 400 })
	return e, bin, p
}

// allNumbers waits for the end of numbersPane's lines and checks that the
// pane holds every one once, in order; summary says what happened.
func allNumbers(t *testing.T, p *e2e.Tmux, summary string) {
	t.Helper()
	p.WaitShows(fmt.Sprintf("END %d", numberLines), 60*time.Second)
	rows := p.Capture(true)
	c := e2e.CountNumbered(rows)
	t.Logf("SUMMARY remote attach, %s; %s", summary, c)
	if c.First != 0 || c.Last != numberLines-1 || c.Lines != numberLines || c.Missing != 0 || c.Repeated != 0 || c.Backwards != 0 || c.Torn != 0 {
		t.Errorf("the pane does not hold every line once and in order: %s\nits last rows:\n%s", c, strings.Join(rows[max(0, len(rows)-30):], "\n"))
	}
}

// sshPids are the ssh processes whose command line holds marker.
func sshPids(marker string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(b, []byte{0})
		if filepath.Base(string(args[0])) == "ssh" && bytes.Contains(b, []byte(marker)) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// What can go wrong reaching another machine is one line each, and the
// exit status 1.
func TestRemoteFaults(t *testing.T) {
	t.Parallel()
	s := startSSHD(t)
	e := e2e.NewEnv(t)
	bin := remoteBin(t, e)
	closed := s.Through(s.SSH, freePort(t))
	// A termkeep of a protocol this one no longer speaks, as its relay
	// would say so.
	newer := filepath.Join(e.Dir, "newer-termkeep")
	os.WriteFile(newer, []byte("#!/bin/sh\necho 'termkeep-relay 1 99 50'\nexec cat\n"), 0o755)
	for _, c := range []struct {
		name, ssh, bin string
		args           []string
		says           string
	}{
		{"no termkeep", s.SSH, "/nonexistent/termkeep", []string{"ls", host + ":"}, "no termkeep on 127.0.0.1: tried /nonexistent/termkeep (its PATH is "},
		{"no termkeep for new", s.SSH, "/nonexistent/termkeep", []string{"new", host + ":"}, "no termkeep on 127.0.0.1: tried /nonexistent/termkeep"},
		{"host refuses", closed, bin, []string{"ls", host + ":"}, "cannot reach 127.0.0.1: ssh: connect to host 127.0.0.1 port"},
		{"no ssh", "/nonexistent/ssh", bin, []string{"ls", host + ":"}, "cannot run ssh (/nonexistent/ssh) to reach 127.0.0.1"},
		{"the remote refuses", s.SSH, bin, []string{"new", host + ":", "--cwd", "/nonexistent"}, "on 127.0.0.1: working directory /nonexistent does not exist"},
		{"another protocol", s.SSH, newer, []string{"ls", host + ":"},
			fmt.Sprintf("the termkeep on 127.0.0.1 speaks protocol 99 (down to 50), this one %d (down to %d)", wire.Version, wire.MinVersion)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, errs, code := tk(t, c.ssh, c.bin, c.args...)
			if code != 1 || !strings.HasPrefix(errs, "termkeep: "+c.says) || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, said %q; want 1 and one line saying %q", code, errs, c.says)
			}
		})
	}
}
