package security

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/e2e"
	"termkeep/internal/holder"
	"termkeep/internal/sessiondir"
)

// A server whose file limit (RLIMIT_NOFILE) is 64: sessions are created
// until one is refused, with 503 and a sentence naming the limit; the
// refused create leaves nothing behind (no row, no directory, no holder),
// the running sessions work, and ending two makes room for another.
func TestLimitsOpenFiles(t *testing.T) {
	e2e.SkipShort(t)
	e := e2e.NewEnv(t)
	e.StartServer()
	pid := e.Srv.Cmd.Process.Pid
	setLimit(t, pid, unix.RLIMIT_NOFILE, 64)
	created := []string{strings.TrimSpace(e.MustTk("new", "--name", "keep", "--", "cat"))}
	refusal := ""
	for len(created) < 40 {
		out, errs, code := e.Tk("new", "--", "sleep", "600")
		if code != 0 {
			refusal = errs
			break
		}
		created = append(created, strings.TrimSpace(out))
	}
	t.Logf("%d sessions, then: %s", len(created), refusal)
	const want = "termkeep: too many open files: the server's file limit (ulimit -n) is 64 and "
	if !strings.HasPrefix(refusal, want) || !strings.Contains(refusal, "raise it where termkeep serve starts (ulimit -n") {
		t.Fatalf("the refused create said %q, want it to start %q", refusal, want)
	}
	// The same over HTTP: 503. (The count of open files moves by one or
	// two with the requests in flight, so a create may still fit.)
	for i := 0; ; i++ {
		s, err := e.C.Create(context.Background(), api.CreateRequest{Command: []string{"sleep", "600"}, Cwd: "/"})
		if err == nil && i < 5 {
			created = append(created, s.ID)
			continue
		}
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != http.StatusServiceUnavailable || !strings.Contains(ce.Message, "too many open files: the server's file limit (ulimit -n) is 64") {
			t.Fatalf("create over HTTP at the file limit: %v, want 503 naming the limit", err)
		}
		break
	}
	e.NoHalfSessions(len(created))
	if n := holderProcs(e.Dir); n != len(created) {
		t.Errorf("%d holder processes for %d sessions", n, len(created))
	}
	e.SessionWorks("keep", "files-ok")
	if syscall.Kill(pid, 0) != nil {
		t.Fatal("the server died")
	}
	for _, id := range created[1:3] {
		e.MustTk("rm", "--force", id)
	}
	untilRoom(t, func() (string, string, int) { return e.Tk("new", "--name", "again", "--", "cat") })
	e.SessionWorks("again", "room-again")
}

// untilRoom runs create until it succeeds, for up to 20 s. The room that
// removed sessions make comes once their holders have gone (the server
// closes their files then), a moment after rm returns: a holder built
// with -race sleeps a second at exit.
func untilRoom(t *testing.T, create func() (string, string, int)) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, errs, code := create()
		if code == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no room for a session after some were removed: exit %d: %s", code, errs)
		}
	}
}

// A server whose user may have few processes (RLIMIT_NPROC, which root
// ignores: the server runs as nobody when the test is root): sessions are
// created until one is refused, with 503 and a sentence naming the limit;
// the refused create leaves nothing behind, the server lives, running
// sessions work, and ending three makes room for another.
func TestLimitsProcesses(t *testing.T) {
	e2e.SkipShort(t)
	u := newUserEnv(t)
	base, err := userTasks(u.uid)
	if err != nil {
		t.Skipf("cannot count processes: %v", err)
	}
	// Room for the server and a few sessions beyond its reserve.
	limit := base + 100
	u.start(uint64(limit))
	u.mustRun("new", "--name", "keep", "--", "cat")
	created := []string{"keep"}
	refusal := ""
	for len(created) < 30 {
		out, errs, code := u.run("new", "--", "sleep", "600")
		if code != 0 {
			refusal = errs
			break
		}
		created = append(created, strings.TrimSpace(out))
	}
	now, _ := userTasks(u.uid)
	t.Logf("limit %d (uid %d had %d); %d sessions, %d tasks, then: %s", limit, u.uid, base, len(created), now, refusal)
	if len(created) < 4 {
		t.Fatalf("only %d sessions fit in %d processes and threads", len(created), limit)
	}
	want := fmt.Sprintf("termkeep: too many processes: the server's user (%s) may have %d processes and threads (ulimit -u) and has ", u.name, limit)
	if !strings.HasPrefix(refusal, want) || !strings.Contains(refusal, "raise it where termkeep serve starts (ulimit -u") {
		t.Fatalf("the refused create said %q, want it to start %q", refusal, want)
	}
	// The same over HTTP: 503. (The CLI's own threads counted against the
	// limit a moment ago, so a create over HTTP may still fit.)
	for i := 0; ; i++ {
		code, body := u.createOverTCP()
		var s struct{ ID string }
		if code == http.StatusCreated && i < 5 && json.Unmarshal([]byte(body), &s) == nil {
			created = append(created, s.ID)
			continue
		}
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "too many processes: the server's user") {
			t.Fatalf("create over HTTP at the process limit: %d %s, want 503 naming the limit", code, body)
		}
		break
	}
	u.noHalfSessions(len(created))
	if syscall.Kill(u.srv.Process.Pid, 0) != nil {
		t.Fatal("the server died")
	}
	u.echoes("keep", "procs-ok")
	// The creates over HTTP filled the room the CLI's threads had left, and
	// the next create runs the CLI again: a session's six or seven tasks
	// less is within that CLI's count of the reserve, so end three.
	for _, id := range created[1:4] {
		u.mustRun("rm", "--force", id)
	}
	untilRoom(t, func() (string, string, int) { return u.run("new", "--name", "again", "--", "cat") })
	u.echoes("again", "room-again")
}

// setLimit sets resource res of process pid to n (soft and hard).
func setLimit(t *testing.T, pid int, res int, n uint64) {
	t.Helper()
	lim := unix.Rlimit{Cur: n, Max: n}
	if err := unix.Prlimit(pid, res, &lim, nil); err != nil {
		t.Skipf("cannot set the server's resource limit: %v", err)
	}
}

// holderProcs counts the holder processes with a file open in dir.
func holderProcs(dir string) int {
	n := 0
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte(filepath.Join(e2e.BinDir, "termkeep-holder"))) {
			continue
		}
		fds, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "fd", "*"))
		for _, fd := range fds {
			if target, err := os.Readlink(fd); err == nil && strings.HasPrefix(target, dir+"/") {
				n++
				break
			}
		}
	}
	return n
}

// userTasks counts the threads of uid's processes: what RLIMIT_NPROC bounds.
func userTasks(uid int) (int, error) {
	paths, _ := filepath.Glob("/proc/[0-9]*/status")
	if len(paths) == 0 {
		return 0, errors.New("no /proc")
	}
	n := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		mine, threads := false, 0
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "Uid:" {
				mine = f[1] == strconv.Itoa(uid)
			}
			if len(f) >= 2 && f[0] == "Threads:" {
				threads, _ = strconv.Atoi(f[1])
			}
		}
		if mine {
			n += threads
		}
	}
	return n, nil
}

// userEnv is a server and CLI running as an unprivileged user: nobody when
// the test runs as root, else the test's own user. Its binaries and state
// directory are the user's own.
type userEnv struct {
	t        *testing.T
	uid, gid int
	name     string
	cred     *syscall.Credential // nil: the test's own user
	base     string              // holds bin/ and the state directory
	dir      string              // the state directory
	srv      *exec.Cmd
	exited   chan struct{}
}

func newUserEnv(t *testing.T) *userEnv {
	t.Helper()
	u := &userEnv{t: t, uid: os.Getuid(), gid: os.Getgid()}
	if u.uid == 0 {
		nobody, err := user.Lookup("nobody")
		if err != nil {
			t.Skipf("RLIMIT_NPROC does not bind root, and there is no user nobody to run the server as: %v", err)
		}
		uid, _ := strconv.Atoi(nobody.Uid)
		gid, _ := strconv.Atoi(nobody.Gid)
		u.uid, u.gid = uid, gid
		u.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// RLIMIT_NPROC counts every process of the uid on the machine: a second
	// test run beside this one (another clone's make test) would fill the
	// room this test measures. One at a time per uid.
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), fmt.Sprintf("termkeep-e2e-nproc-%d.lock", u.uid)), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	if me, err := user.LookupId(strconv.Itoa(u.uid)); err == nil {
		u.name = me.Username
	} else {
		u.name = strconv.Itoa(u.uid)
	}
	base, err := os.MkdirTemp("", "tkp")
	if err != nil {
		t.Fatal(err)
	}
	u.base, u.dir = base, filepath.Join(base, "state")
	t.Cleanup(u.cleanup)
	bin := filepath.Join(base, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	owned := []string{base, bin}
	for _, name := range []string{"termkeep", "termkeep-server", "termkeep-holder"} {
		b, err := os.ReadFile(filepath.Join(e2e.BinDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
		owned = append(owned, filepath.Join(bin, name))
	}
	for _, p := range owned {
		if err := os.Chown(p, u.uid, u.gid); err != nil {
			t.Skipf("cannot give %s to uid %d: %v", p, u.uid, err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return u
}

func (u *userEnv) command(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(u.base, "bin", "termkeep"), args...)
	cmd.Dir = u.base
	// GORACE as e2e.Main set it: without the race detector's exit sleep.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + u.base, "LANG=C.UTF-8", "GORACE=" + os.Getenv("GORACE")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred, Setpgid: true}
	return cmd
}

// start starts the server as the user, its RLIMIT_NPROC soft limit nproc,
// and waits for it to answer.
func (u *userEnv) start(nproc uint64) {
	u.t.Helper()
	logf, err := os.Create(filepath.Join(u.base, "server.log"))
	if err != nil {
		u.t.Fatal(err)
	}
	defer logf.Close()
	u.srv = u.command("serve", "--state-dir", u.dir, "--kill-grace", "1s", "--listen", "127.0.0.1:0")
	u.srv.Stdout, u.srv.Stderr = logf, logf
	// The server inherits the limit from this process, which lowers its own
	// soft limit for the moment of the start: root is not bound by it, and
	// neither is a user below it (a lower soft limit needs no privilege to
	// set, nor to raise back up to the hard one; a process of another user
	// could only be given it with CAP_SYS_RESOURCE).
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &old); err != nil {
		u.t.Skipf("cannot read RLIMIT_NPROC: %v", err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: min(nproc, old.Max), Max: old.Max}); err != nil {
		u.t.Skipf("cannot set RLIMIT_NPROC: %v", err)
	}
	err = u.srv.Start()
	if rerr := unix.Setrlimit(unix.RLIMIT_NPROC, &old); rerr != nil {
		u.t.Errorf("restore RLIMIT_NPROC: %v", rerr)
	}
	if err != nil {
		u.t.Skipf("cannot start the server as uid %d: %v", u.uid, err)
	}
	u.exited = make(chan struct{})
	go func() { u.srv.Wait(); close(u.exited) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, _, code := u.run("ls"); code == 0 {
			return
		}
		select {
		case <-u.exited:
			b, _ := os.ReadFile(filepath.Join(u.base, "server.log"))
			u.t.Fatalf("the server exited at start:\n%s", b)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			u.t.Fatal("timed out waiting for the server to answer")
		}
	}
}

// run runs the CLI as the user.
func (u *userEnv) run(args ...string) (string, string, int) {
	u.t.Helper()
	cmd := u.command(append([]string{"--state-dir", u.dir, "--no-autostart"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	case err != nil:
		u.t.Fatalf("run termkeep %v: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

func (u *userEnv) mustRun(args ...string) string {
	u.t.Helper()
	out, errs, code := u.run(args...)
	if code != 0 {
		u.t.Fatalf("termkeep %v: exit %d: %s", args, code, errs)
	}
	return out
}

// createOverTCP asks for a session on the browser listener (the unix
// socket takes only the server's own user) and returns the answer.
func (u *userEnv) createOverTCP() (int, string) {
	u.t.Helper()
	addr, err1 := os.ReadFile(filepath.Join(u.dir, "url"))
	tok, err2 := os.ReadFile(filepath.Join(u.dir, "token"))
	if err1 != nil || err2 != nil {
		u.t.Fatalf("no url or token file: %v %v", err1, err2)
	}
	req, _ := http.NewRequest("POST", strings.TrimSpace(string(addr))+"api/sessions", strings.NewReader(`{"command":["cat"],"cwd":"/"}`))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		u.t.Fatalf("create over TCP: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// echoes sends word to a session and waits for its screen to show it.
func (u *userEnv) echoes(ref, word string) {
	u.t.Helper()
	u.mustRun("send", ref, word)
	e2e.WaitFor(u.t, 20*time.Second, ref+" to echo "+word, func() bool {
		return strings.Contains(u.mustRun("capture", ref), word)
	})
}

// noHalfSessions checks that n sessions are listed, all running with a
// live holder, and that there is no other session directory.
func (u *userEnv) noHalfSessions(n int) {
	u.t.Helper()
	out := u.mustRun("ls", "--json")
	var list []struct{ ID, State, Reason string }
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		u.t.Fatalf("ls --json: %v", err)
	}
	dirs, _ := filepath.Glob(filepath.Join(u.dir, "sessions", "*"))
	if len(list) != n || len(dirs) != n {
		u.t.Errorf("%d sessions listed, %d directories; want %d of each", len(list), len(dirs), n)
	}
	for _, s := range list {
		m, err := sessiondir.ReadMeta(filepath.Join(u.dir, "sessions", s.ID))
		if s.State != "running" || err != nil || !holder.IsHolder(m.HolderPid) {
			u.t.Errorf("session %s is %s (%s), holder %d (%v)", s.ID, s.State, s.Reason, m.HolderPid, err)
		}
	}
}

func (u *userEnv) cleanup() {
	if u.srv != nil {
		u.run("shutdown", "--sessions")
		select {
		case <-u.exited:
		case <-time.After(20 * time.Second):
			u.srv.Process.Kill()
		}
	}
	metas, _ := filepath.Glob(filepath.Join(u.dir, "sessions", "*"))
	for _, m := range metas {
		if meta, err := sessiondir.ReadMeta(m); err == nil && meta.EndedAt == nil {
			syscall.Kill(meta.HolderPid, syscall.SIGKILL)
			syscall.Kill(-meta.Pid, syscall.SIGKILL)
		}
	}
	if u.t.Failed() {
		if b, err := os.ReadFile(filepath.Join(u.base, "server.log")); err == nil {
			u.t.Logf("server.log:\n%s", e2e.Tail(b, 4000))
		}
	}
	os.RemoveAll(u.base)
}
