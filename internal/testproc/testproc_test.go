package testproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const victimEnv = "TK_TESTPROC_VICTIM"

// wrapEnv makes the test binary Wrap the shell script it holds.
const wrapEnv = "TK_TESTPROC_WRAP"

func TestMain(m *testing.M) {
	if os.Getenv(victimEnv) != "" {
		os.Exit(Run(victim{}))
	}
	if script := os.Getenv(wrapEnv); script != "" {
		os.Exit(Wrap([]string{"sh", "-c", script}))
	}
	os.Exit(Run(m))
}

// victim is a test run that leaves processes behind as servers and
// holders do, each in a session of its own, prints their pids and its run
// directory, and waits to be killed.
type victim struct{}

func (victim) Run() int {
	dir := os.Getenv(RunEnv)
	state := filepath.Join(dir, "tk1")
	os.Mkdir(state, 0o700)
	lock, _ := os.Create(filepath.Join(state, "lock"))
	var pids []string
	for _, c := range []struct {
		args  []string
		cwd   string
		extra []*os.File
	}{
		{[]string{"sleep", "300"}, state, nil},                                            // named by its working directory
		{[]string{"sh", "-c", "sleep 300; : " + state}, "/", nil},                         // by its command line; its child by descent
		{[]string{"sleep", "300"}, "/", []*os.File{lock}},                                 // by an open file, as a holder
		{[]string{"sh", "-c", "setsid sleep 300 & echo $!; wait"}, "/", []*os.File{lock}}, // a daemon's child
	} {
		cmd := exec.Command(c.args[0], c.args[1:]...)
		cmd.Dir = c.cwd
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // as a holder's: nothing of the run's
		cmd.ExtraFiles = c.extra
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			fmt.Println("start:", err)
			return 1
		}
		pids = append(pids, strconv.Itoa(cmd.Process.Pid))
		if !strings.Contains(c.args[len(c.args)-1], "echo") {
			continue
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); err == nil {
			pids = append(pids, strings.TrimSpace(line)) // a child it started
		}
	}
	// One that names the run in its environment alone.
	cmd := exec.Command("sleep", "300")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Start()
	pids = append(pids, strconv.Itoa(cmd.Process.Pid))
	fmt.Println(dir, strings.Join(pids, " "))
	select {}
}

// A test binary SIGKILLed in the middle of a test leaves nothing running:
// its reaper ends what it started; and when the reaper is gone too, the
// next run's sweep does.
func TestKilledRunLeavesNothing(t *testing.T) {
	for _, withReaper := range []bool{true, false} {
		t.Run(fmt.Sprintf("reaper=%v", withReaper), func(t *testing.T) {
			env := []string{victimEnv + "=1"}
			if !withReaper {
				env = append(env, NoReaperEnv+"=1")
			}
			cmd, line := startSelf(t, env...)
			f := strings.Fields(line)
			dir := f[0]
			var pids []int
			for _, s := range f[1:] {
				p, _ := strconv.Atoi(s)
				pids = append(pids, p)
			}
			if len(pids) < 6 {
				t.Fatalf("victim started %d processes, want 6", len(pids))
			}
			t.Cleanup(func() {
				for _, p := range pids {
					syscall.Kill(p, syscall.SIGKILL)
				}
			})
			cmd.Process.Kill()
			cmd.Wait()
			if withReaper {
				waitGone(t, dir)
			} else {
				for _, p := range pids {
					if !alive(p) {
						t.Fatalf("process %d ended with the test binary: the sweep has nothing to show", p)
					}
				}
				swept := Sweep(filepath.Dir(dir))
				if len(swept) != 1 || swept[0] != dir {
					t.Fatalf("swept %v, want [%s]", swept, dir)
				}
				if _, err := os.Stat(dir); err == nil {
					t.Fatalf("run directory %s left after the sweep", dir)
				}
			}
			for _, p := range pids {
				if alive(p) {
					t.Errorf("process %d left running", p)
				}
			}
		})
	}
}

// startSelf starts this test binary with env added to its environment
// and returns it with the first line it prints.
func startSelf(t *testing.T, env ...string) (*exec.Cmd, string) {
	t.Helper()
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s %v: %v", self, env, err)
	}
	return cmd, line
}

// waitGone waits for the reaper to remove dir, its last step.
func waitGone(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reaper left %s", dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A live run's directory is not swept.
func TestSweepSparesLiveRuns(t *testing.T) {
	if swept := Sweep(filepath.Dir(os.Getenv(RunEnv))); len(swept) != 0 {
		t.Fatalf("swept %v, a live run's", swept)
	}
	if _, err := os.Stat(os.Getenv(RunEnv)); err != nil {
		t.Fatal(err)
	}
}

// The tests see no TERMKEEP_ variable of the user's, and XDG directories
// of their own.
func TestScrubEnv(t *testing.T) {
	self, _ := os.Executable()
	cmd := exec.Command(self, "-test.run=^TestScrubbedChild$")
	cmd.Env = append(os.Environ(), "TERMKEEP_LISTEN=127.0.0.1:1", "TERMKEEP_STATE_DIR=/nonexistent", "XDG_CONFIG_HOME=/nonexistent", "TK_TESTPROC_CHECK=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
}

func TestScrubbedChild(t *testing.T) {
	if os.Getenv("TK_TESTPROC_CHECK") == "" {
		t.Skip("run by TestScrubEnv")
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TERMKEEP_") {
			t.Errorf("%s reached the tests", kv)
		}
	}
	for _, k := range userXDG {
		if v := os.Getenv(k); !strings.HasPrefix(v, os.Getenv(RunEnv)+"/") {
			t.Errorf("%s=%s, not in the run directory", k, v)
		}
	}
}

func TestMentions(t *testing.T) {
	for _, tc := range []struct {
		s, dir string
		want   bool
	}{
		{"/tmp/tk1", "/tmp/tk1", true},
		{"/tmp/tk1/sessions/x/lock", "/tmp/tk1", true},
		{"TMPDIR=/tmp/tk1", "/tmp/tk1", true},
		{"/tmp/tk12", "/tmp/tk1", false},
		{"/tmp/tk12 /tmp/tk1", "/tmp/tk1", true},
		{"sleep 1; : /tmp/tk1", "/tmp/tk1", true},
		{"", "/tmp/tk1", false},
	} {
		if got := mentions(tc.s, tc.dir); got != tc.want {
			t.Errorf("mentions(%q, %q) = %v", tc.s, tc.dir, got)
		}
	}
}

func TestParseRunName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pid   int
		start uint64
		ok    bool
	}{
		{"tkrun2n9c.1z141z3", 123456, 4294967295, true},
		{"tkrun2n9c", 0, 0, false},
		{"tkrunx.", 0, 0, false},
		{"tkrun0.1", 0, 0, false},
		{"tke123.1", 0, 0, false},
	} {
		pid, start, ok := parseRunName(tc.name)
		if pid != tc.pid || start != tc.start || ok != tc.ok {
			t.Errorf("parseRunName(%q) = %d, %d, %v", tc.name, pid, start, ok)
		}
	}
}

// A command run with Wrap (the browser tests' node) that is killed
// outright, or whose Wrap is, leaves nothing running: a daemon it started
// in a session of its own is ended by Wrap, or by Wrap's reaper.
func TestWrapLeavesNothing(t *testing.T) {
	for _, kill := range []string{"child", "wrap"} {
		t.Run("kill="+kill, func(t *testing.T) {
			// The child prints the run directory, its pid and its daemon's.
			cmd, line := startSelf(t, wrapEnv+`=setsid sleep 300 & echo "$TK_TEST_RUN $$ $!"; exec sleep 300`)
			f := strings.Fields(line)
			if len(f) != 3 || !strings.Contains(filepath.Base(f[0]), prefix) {
				t.Fatalf("wrapped child printed %q, want a run directory and two pids", line)
			}
			dir := f[0]
			child, _ := strconv.Atoi(f[1])
			daemon, _ := strconv.Atoi(f[2])
			t.Cleanup(func() {
				syscall.Kill(child, syscall.SIGKILL)
				syscall.Kill(daemon, syscall.SIGKILL)
			})
			if kill == "child" {
				syscall.Kill(child, syscall.SIGKILL)
				cmd.Wait()
				if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGKILL) {
					t.Errorf("Wrap exited %d, want %d for a child killed by SIGKILL", code, 128+int(syscall.SIGKILL))
				}
				if _, err := os.Stat(dir); err == nil {
					t.Errorf("run directory %s left after Wrap returned", dir)
				}
			} else {
				cmd.Process.Kill()
				cmd.Wait()
				waitGone(t, dir)
			}
			for _, p := range []int{child, daemon} {
				if alive(p) {
					t.Errorf("process %d left running", p)
				}
			}
		})
	}
}
