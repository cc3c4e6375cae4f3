// Package testproc keeps a test binary's environment out of its tests and
// its processes from outliving it.
//
// Run gives the test binary a run directory of its own, named for its pid
// and start time, and points TMPDIR at it: every state directory, socket
// and temporary file of the tests lands there, and every process they
// start inherits TMPDIR and RunEnv naming it. When the tests end, every
// process that still names the run directory (in its command line,
// environment, working directory or open files), with all its
// descendants, is killed, and the directory removed. Servers and holders
// call setsid, so neither a process group nor a parent-death signal
// reaches them; naming the directory does.
//
// A test binary killed outright (SIGKILL, go test's -timeout) runs no
// cleanup: a reaper process that Run starts beside it, in a session of its
// own, waits for the binary's end and does the same; and the next test
// binary's Run sweeps the run directories whose owner is gone, in case the
// reaper was killed too.
package testproc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"termkeep/internal/procinfo"
)

// RunEnv names the run directory in the environment of every process a
// test starts.
const RunEnv = "TK_TEST_RUN"

// reaperEnv makes the test binary the reaper of the run directory it names.
const reaperEnv = "TK_TEST_REAPER"

// NoReaperEnv, set, starts no reaper (the sweep's test: what a killed
// reaper leaves is the next run's to end).
const NoReaperEnv = "TK_TEST_NO_REAPER"

// prefix starts the name of every run directory: prefix, the owner's pid
// and its start time (clock ticks since boot), both in base 36, so that
// sockets below it stay within their 108 bytes.
const prefix = "tkrun"

// userXDG are the XDG directories termkeep or the shells it starts read: a
// test sees empty ones of its own, never the user's.
var userXDG = []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"}

// M is what Run runs: *testing.M.
type M interface{ Run() int }

// Run runs the tests of m in a run directory of their own and returns
// their exit code, once every process they left has been ended. Call it
// from TestMain after the test binary's own child modes. A test binary
// started as a reaper does that job and exits here.
func Run(m M) int {
	if dir := os.Getenv(reaperEnv); dir != "" {
		os.Exit(reaper(dir))
	}
	base := os.TempDir()
	Sweep(base)
	dir, err := start(base)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testproc:", err)
		return 1
	}
	code := m.Run()
	Reap(dir)
	os.RemoveAll(dir)
	return code
}

// Wrap runs argv as Run runs a test binary: in a run directory of its
// own, with the environment scrubbed, every process it leaves ended when
// it ends, and a reaper beside this process for when this one is killed.
// It is for tests that are no Go test binary (the browser tests' node):
// their child killed outright is reaped here, and this process killed,
// by the reaper. It returns the child's exit code (1 when it could not
// start; 128+n when signal n ended it). Call it first thing in main.
func Wrap(argv []string) int {
	if len(argv) == 0 && os.Getenv(reaperEnv) == "" {
		fmt.Fprintln(os.Stderr, "testproc: no command to run")
		return 2
	}
	return Run(command(argv))
}

// command is a Wrap's child, run as Run runs a test binary's tests.
type command []string

func (argv command) Run() int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// A signal to this process (make's SIGTERM) is passed on to the
	// child; Run's reaping follows the child's end.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testproc:", err)
		return 1
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if err != nil && cmd.ProcessState.ExitCode() <= 0 {
		return 1
	}
	return cmd.ProcessState.ExitCode()
}

// start makes this binary's run directory under base, scrubs the
// environment, and starts the reaper.
func start(base string) (string, error) {
	self := os.Getpid()
	st, err := startTime(self)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, prefix+strconv.FormatInt(int64(self), 36)+"."+strconv.FormatUint(st, 36))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	// Others may pass through, as through /tmp (a test's client run as
	// nobody reaches a socket below), but not list it.
	if err := os.Chmod(dir, 0o711); err != nil {
		return "", err
	}
	if err := ScrubEnv(dir); err != nil {
		return "", err
	}
	if os.Getenv(NoReaperEnv) == "" {
		if err := startReaper(dir); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// ScrubEnv clears every TERMKEEP_* variable, points the XDG directories at
// empty ones under dir, and names dir in TMPDIR and RunEnv: a user's
// exported TERMKEEP_LISTEN or config must not change what the tests run.
func ScrubEnv(dir string) error {
	// Go finds its build cache and its settings through the XDG
	// directories: the tests that build keep the user's, or every build
	// would start from an empty cache.
	if os.Getenv("GOCACHE") == "" {
		if c, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(c, "go-build"))
		}
	}
	if os.Getenv("GOENV") == "" {
		if c, err := os.UserConfigDir(); err == nil {
			os.Setenv("GOENV", filepath.Join(c, "go", "env"))
		}
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "TERMKEEP_") {
			os.Unsetenv(k)
		}
	}
	for _, k := range userXDG {
		d := filepath.Join(dir, "xdg", strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(k, "XDG_"), "_HOME")))
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		os.Setenv(k, d)
	}
	os.Setenv("TMPDIR", dir)
	os.Setenv(RunEnv, dir)
	return nil
}

// startReaper starts this binary again as the reaper of dir: it reads its
// stdin, a pipe whose other end only this process holds, until the
// kernel closes it at this process's end, however it ends.
func startReaper(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), reaperEnv+"="+dir)
	cmd.Stdin = r // nothing on stdout: go test reads the binary's output to its end
	cmd.Dir = "/"
	// A session of its own: Ctrl-C at the terminal ends the tests, not it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return err
	}
	r.Close()
	go cmd.Wait()
	keep = w // held open, never written, until this process ends
	return nil
}

var keep *os.File

func reaper(dir string) int {
	var b [1]byte
	for {
		if _, err := os.Stdin.Read(b[:]); err != nil {
			break
		}
	}
	Reap(dir)
	os.RemoveAll(dir)
	return 0
}

// Sweep ends the processes of every run directory under base whose owner
// has ended, and removes the directory. It returns the directories swept.
func Sweep(base string) []string {
	names, _ := filepath.Glob(filepath.Join(base, prefix+"*"))
	var swept []string
	for _, dir := range names {
		pid, st, ok := parseRunName(filepath.Base(dir))
		if !ok {
			continue
		}
		if now, err := startTime(pid); err == nil && now == st {
			continue // its owner runs
		}
		Reap(dir)
		os.RemoveAll(dir)
		swept = append(swept, dir)
	}
	return swept
}

// parseRunName reads the owner's pid and start time from a run
// directory's name.
func parseRunName(name string) (pid int, start uint64, ok bool) {
	rest, found := strings.CutPrefix(name, prefix)
	if !found {
		return 0, 0, false
	}
	p, s, found := strings.Cut(rest, ".")
	if !found {
		return 0, 0, false
	}
	n, err1 := strconv.ParseInt(p, 36, 32)
	start, err2 := strconv.ParseUint(s, 36, 64)
	if err1 != nil || err2 != nil || n <= 0 {
		return 0, 0, false
	}
	return int(n), start, true
}

// Reap SIGKILLs every process that names dir (its command line,
// environment, working directory or an open file is dir or below it) and
// every descendant of one, but never this process or its ancestors, until
// none is left or 10 s have passed. It returns the pids it killed.
func Reap(dir string) []int {
	dir = filepath.Clean(dir)
	spare := map[int]bool{}
	for p := os.Getpid(); p > 1 && !spare[p]; {
		spare[p] = true
		p, _ = procinfo.Parent(p)
	}
	var killed []int
	deadline := time.Now().Add(10 * time.Second)
	for wait := time.Millisecond; time.Now().Before(deadline); wait = min(2*wait, 50*time.Millisecond) {
		found := false
		for _, pid := range namers(dir) {
			tree, err := procinfo.Descendants(pid)
			if err != nil {
				continue
			}
			for _, p := range tree {
				if !spare[p] && alive(p) {
					syscall.Kill(p, syscall.SIGKILL)
					found = true
					if !slices.Contains(killed, p) {
						killed = append(killed, p)
					}
				}
			}
		}
		if !found {
			break
		}
		// A process SIGKILLed is gone once the kernel has torn it down
		// (a zombie names nothing); look again for it and its children.
		time.Sleep(wait)
	}
	return killed
}

// namers lists the processes that name dir.
func namers(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 {
			continue
		}
		if names(pid, dir) {
			out = append(out, pid)
		}
	}
	return out
}

// names says whether process pid names dir or a path below it.
func names(pid int, dir string) bool {
	var strs []string
	if args, err := procinfo.Cmdline(pid); err == nil {
		strs = append(strs, args...)
	}
	if env, err := procinfo.Environ(pid); err == nil {
		strs = append(strs, env...)
	}
	if wd, err := procinfo.Cwd(pid); err == nil {
		strs = append(strs, wd)
	}
	if files, err := procinfo.OpenFiles(pid); err == nil {
		strs = append(strs, files...)
	}
	return slices.ContainsFunc(strs, func(s string) bool { return mentions(s, dir) })
}

// mentions says whether s holds path dir, whole: dir itself or a path
// below it, not /tmp/tk1 in /tmp/tk12.
func mentions(s, dir string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], dir)
		if j < 0 {
			return false
		}
		end := i + j + len(dir)
		if end == len(s) || s[end] == '/' || s[end] == ':' || s[end] == ' ' || s[end] == '"' || s[end] == '\'' {
			return true
		}
		i = i + j + 1
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := statFields(b)
	return len(f) > 0 && string(f[0]) != "Z"
}

// startTime returns the time process pid started, in clock ticks since
// boot (field 22 of /proc/<pid>/stat), which tells it from a later
// process given the same pid.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	f := statFields(b)
	if len(f) < 20 {
		return 0, fmt.Errorf("stat of %d is cut short", pid)
	}
	return strconv.ParseUint(string(f[19]), 10, 64)
}

// statFields are the fields of /proc/<pid>/stat after the command name
// (which may hold blanks and parentheses): state first.
func statFields(b []byte) [][]byte {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}
