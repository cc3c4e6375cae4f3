package remote

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeSSH writes an ssh that runs the remote command here, as sshd would
// with sh, after printing pre on standard error and exiting with status
// code when code is not 0. It records its arguments in args.
func fakeSSH(t *testing.T, pre string, code int) (ssh, args string) {
	t.Helper()
	dir := t.TempDir()
	args = filepath.Join(dir, "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + shellQuote(args) + "\n"
	if pre != "" {
		script += "printf '%s\\n' " + shellQuote(pre) + " >&2\n"
	}
	if code != 0 {
		script += "exit " + strconv.Itoa(code) + "\n"
	}
	script += "while [ \"$1\" != -- ]; do shift; done\nshift 2\nexec sh -c \"$1\"\n"
	ssh = filepath.Join(dir, "ssh")
	if err := os.WriteFile(ssh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return ssh, args
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "termkeep")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func dialer(ssh, bin string) *Dialer {
	env := map[string]string{"TERMKEEP_SSH": ssh + " -p 2222", "TERMKEEP_REMOTE_BIN": bin}
	return NewDialer(Target{Host: "me@[::1]"}, func(k string) string { return env[k] }, 11, 1)
}

// A relay that answers with its preamble carries bytes both ways; ssh
// got the user's options, the batch ones on a reconnect, and the host
// without brackets.
func TestRelayCarriesBytes(t *testing.T) {
	ssh, args := fakeSSH(t, "", 0)
	bin := script(t, `[ "$1" = __relay ] || exit 9; printf 'motd\ntermkeep-relay 1 11 1\n'; exec cat`)
	for _, how := range []Dial{DialFirst, DialAgain, DialAsking} {
		c, err := dialer(ssh, bin).Relay(context.Background(), how)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("ping\n"))
		got := make([]byte, 5)
		if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping\n" {
			t.Fatalf("read %q, %v", got, err)
		}
		c.Close()
		select {
		case <-c.Exited():
		case <-time.After(5 * time.Second):
			t.Fatal("ssh did not end on Close")
		}
		b, _ := os.ReadFile(args)
		a := strings.Split(strings.TrimSpace(string(b)), "\n")
		joined := strings.Join(a, " ")
		if a[0] != "-p" || a[1] != "2222" || !strings.Contains(joined, "-T -- me@::1 sh -c ") ||
			strings.Contains(joined, "BatchMode=yes") != (how == DialAgain) || strings.Contains(joined, "ControlPath=none") != (how != DialFirst) {
			t.Errorf("dial %d: ssh ran with %q", how, a)
		}
	}
}

func TestRelayFaults(t *testing.T) {
	refused, _ := fakeSSH(t, "ssh: connect to host ::1 port 2222: Connection refused", 255)
	denied, _ := fakeSSH(t, "me@::1: Permission denied (publickey).", 255)
	ok, _ := fakeSSH(t, "", 0)
	for _, c := range []struct {
		name, ssh, bin string
		kind           Kind
		says           string
	}{
		{"no ssh", "/nonexistent/ssh", "", KindNoSSH, "cannot run ssh (/nonexistent/ssh -p 2222) to reach me@[::1]"},
		{"refused", refused, "", KindSSH, "cannot reach me@[::1]: ssh: connect to host ::1 port 2222: Connection refused"},
		{"password", denied, "", KindAuth, "ssh to me@[::1] was refused: me@::1: Permission denied (publickey)."},
		{"no termkeep", ok, "/nonexistent/termkeep", KindMissing, "no termkeep on me@[::1]: tried /nonexistent/termkeep (its PATH is "},
		{"no termkeep anywhere", ok, "", KindMissing, "tried termkeep on the PATH, then ~/.local/bin/termkeep"},
		{"no relay", ok, script(t, `echo 'termkeep: unknown command "__relay" for "termkeep" (see `+"`termkeep --help`"+`)' >&2; exit 2`),
			KindVersion, "the termkeep on me@[::1] is older than remote attach"},
		{"other protocol", ok, script(t, `echo 'termkeep-relay 1 40 30'; exec cat`),
			KindVersion, "the termkeep on me@[::1] speaks protocol 40 (down to 30), this one 11 (down to 1)"},
		{"other relay", ok, script(t, `echo 'termkeep-relay 2 11 1'; exec cat`), KindVersion, "relays by contract 2, this one by 1"},
		{"server fails", ok, script(t, `echo 'termkeep: the state directory /x is not yours' >&2; exit 1`),
			KindRemote, "on me@[::1]: the state directory /x is not yours"},
		{"silent", ok, script(t, `exit 3`), KindRemote, "the remote command on me@[::1] exited with status 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "no termkeep anywhere" {
				t.Setenv("HOME", t.TempDir())
				t.Setenv("PATH", "/usr/bin:/bin")
			}
			conn, err := dialer(c.ssh, c.bin).Relay(context.Background(), DialFirst)
			var re *Error
			if !errors.As(err, &re) {
				if conn != nil {
					conn.Close()
				}
				t.Fatalf("got %v, %v; want an *Error", conn, err)
			}
			if re.Kind != c.kind || !strings.Contains(re.Msg, c.says) || strings.Contains(re.Msg, "\n") {
				t.Errorf("got kind %d %q; want kind %d saying %q", re.Kind, re.Msg, c.kind, c.says)
			}
		})
	}
}

// A relay that never answers is given up when ctx ends.
func TestRelayDialEndsWithContext(t *testing.T) {
	ok, _ := fakeSSH(t, "", 0)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := dialer(ok, script(t, "exec sleep 30")).Relay(ctx, DialAgain)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %#v after %s", err, time.Since(began))
	}
}

// Run passes the remote termkeep's output on, and its failure as its
// own sentence and status.
func TestRun(t *testing.T) {
	ok, _ := fakeSSH(t, "", 0)
	bin := script(t, `if [ "$1" = new ]; then echo abcdefgh; echo warn >&2; exit 0; fi; echo "termkeep: bad flag $2" >&2; exit 2`)
	var out, errb bytes.Buffer
	if err := dialer(ok, bin).Run(context.Background(), []string{"new", "--name", "it's"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.String() != "abcdefgh\n" || errb.String() != "warn\n" {
		t.Errorf("got %q and %q", out.String(), errb.String())
	}
	err := dialer(ok, bin).Run(context.Background(), []string{"ls", "it's"}, &out, &errb)
	var re *Error
	if !errors.As(err, &re) || re.Code != 2 || re.Msg != "on me@[::1]: bad flag it's" {
		t.Errorf("got %#v", err)
	}
}
