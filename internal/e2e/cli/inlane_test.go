package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"termkeep/internal/e2e"
)

func laneTyped(t *testing.T, e *e2e.Env) float64 {
	t.Helper()
	return metric(t, e, "termkeep_lane_typed_bytes_total")
}

// waitInputLane types a key and erases it until the holder, not attach,
// has read one since the call: the input lane runs.
func waitInputLane(t *testing.T, e *e2e.Env, typ func(string)) {
	t.Helper()
	before := laneTyped(t, e)
	e2e.WaitFor(t, 15*time.Second, "an input lane to read a key", func() bool {
		typ("z\x7f")
		time.Sleep(20 * time.Millisecond)
		return laneTyped(t, e) > before
	})
}

const bashPrompt = "PS1=$ "

// Keys typed into attach while the holder reads its terminal reach the
// program once and in order, whatever goes back through the server
// between them: line editing, a control key, a burst, the detach key.
func TestAttachInputLane(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.TkEnv([]string{bashPrompt}, "", "new", "--name", "in", "--", "bash", "--norc", "--noprofile")
	a := startLaneTerm(t, e, "in")
	a.waitOutput("$ ")
	waitInputLane(t, e, a.typ)

	// An arrow in the middle of typing: the holder hands it back and
	// reads on only once it has reached the shell.
	for _, k := range []string{"echo a", "b", "\x1b[D", "X", "\r"} {
		a.typ(k)
		time.Sleep(15 * time.Millisecond)
	}
	a.waitOutput("aXb\r\n")

	// A control key, then typing.
	a.typ("sleep 100\r")
	time.Sleep(100 * time.Millisecond)
	a.typ("\x03")
	a.typ("echo after-$((1+1))\r")
	a.waitOutput("after-2")

	// Typing at a fast typist's pace goes by the lane.
	before := laneTyped(t, e)
	a.typ("echo ")
	for range 40 {
		a.typ("t")
		time.Sleep(5 * time.Millisecond)
	}
	a.typ("\r")
	a.waitOutput("\r" + strings.Repeat("t", 40) + "\r\n")
	// The holder tells the server what it typed along with the output.
	e2e.WaitFor(t, 10*time.Second, "the typing counted as the lane's", func() bool { return laneTyped(t, e) >= before+40 })

	// A burst, one key at a time as fast as they come: what piles up
	// beyond wire.MaxPlainTyping between two reads goes back as a paste.
	var want strings.Builder
	for i := range 300 {
		want.WriteByte(byte('a' + i%26))
	}
	a.typ("echo ")
	for _, c := range []byte(want.String()) {
		a.typ(string(c))
	}
	a.typ("\r")
	// The command's output: every key once, in order.
	a.waitOutput("\r" + want.String() + "\r\n")
	sameScreen(t, e, a, "in")

	// The detach key goes back to attach, which detaches.
	a.typ("\x1c")
	if code := a.exitCode(); code != 0 {
		t.Fatalf("attach exited %d after the detach key", code)
	}
	if !strings.Contains(string(a.bytes()), "detached from in") {
		t.Fatal("attach did not say it detached")
	}
}

// An attach stopped or killed in a real shell gives its terminal back:
// what is typed next goes to the shell, never to the session.
func TestAttachInputLaneGivesTheTerminalBack(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.TkEnv([]string{bashPrompt}, "", "new", "--name", "gb", "--", "bash", "--norc", "--noprofile")
	// No line editing: the shell at its prompt has the terminal's echo on,
	// which is how the test sees it has the terminal back.
	shell := exec.Command("bash", "--norc", "--noprofile", "--noediting", "-i")
	shell.Env = append(os.Environ(), "PS1=outer$ ", "TERM=xterm")
	p, err := pty.StartWithSize(shell, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	a := &attachPty{t: t, cmd: shell, pty: p, done: make(chan struct{})}
	a.resume = sync.NewCond(&a.mu)
	go a.copyOut()
	t.Cleanup(func() { shell.Process.Kill(); p.Close() })
	a.waitOutput("outer$ ")
	a.typ(fmt.Sprintf("%s --state-dir %s attach gb\r", e2e.TkBin, e.Dir))
	e2e.WaitFor(t, 20*time.Second, "attach to enter raw mode", func() bool { return !echoOn(t, p) })
	waitInputLane(t, e, a.typ)
	pid := childOf(t, shell.Process.Pid)

	a.typ("echo in-$((2+3))\r")
	a.waitOutput("in-5")

	// Stopped from outside: the shell takes the terminal back.
	syscall.Kill(pid, syscall.SIGSTOP)
	e2e.WaitFor(t, 10*time.Second, "the shell to take the terminal back", func() bool { return echoOn(t, p) })
	// Ctrl-U first: keys typed as attach stopped may be left in the
	// terminal, for the shell, as they would be for a person.
	a.typ("\x15echo outer-$((3+4))\r")
	a.waitOutput("outer-7")
	if scr := capture(t, e, "gb"); strings.Contains(scr, "outer") {
		t.Fatalf("keys typed to the shell reached the session:\n%s", scr)
	}

	// Back in the foreground, typing goes to the session again.
	a.typ("fg\r")
	e2e.WaitFor(t, 20*time.Second, "attach to take the terminal again", func() bool { return !echoOn(t, p) })
	a.typ("echo again-$((4+5))\r")
	e2e.WaitFor(t, 20*time.Second, "the session to get the keys", func() bool { return strings.Contains(capture(t, e, "gb"), "again-9") })
	waitInputLane(t, e, a.typ)

	// Killed: the shell has its terminal, and no key goes astray.
	syscall.Kill(pid, syscall.SIGKILL)
	e2e.WaitFor(t, 10*time.Second, "the shell to take the terminal back", func() bool { return echoOn(t, p) })
	a.typ("\x15echo back-$((4+4))\r")
	a.waitOutput("back-8")
	if scr := capture(t, e, "gb"); strings.Contains(scr, "back") {
		t.Fatalf("keys typed to the shell reached the session:\n%s", scr)
	}
}

// A program that asks the terminal where its cursor is right after a
// key the holder typed gets the terminal's answer: the question reaches
// the server's arbiter before the terminal can answer it, though the
// holder writes the output to the terminal first and the answer comes
// back to the server by the input lane.
func TestAttachLaneQuestionAfterAKey(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.TkEnv([]string{bashPrompt}, "", "new", "--name", "q", "--", "bash", "--norc", "--noprofile")
	a := startLaneTerm(t, e, "q")
	a.answers.Store(true)
	a.waitOutput("$ ")
	waitInputLane(t, e, a.typ)
	a.typ(`ask() { printf '\e[6n'; IFS= read -rs -d R -t 10 p; echo "<$1:${p#*[}>"; }` + "\r")
	a.waitOutput("$ ")
	for i := range 10 {
		a.typ(fmt.Sprintf("ask %d\r", i))
		a.waitOutput(fmt.Sprintf("<%d:", i))
		if want := fmt.Sprintf("<%d:7;3>", i); !strings.Contains(string(a.bytes()), want) {
			t.Fatalf("question %d: the program got no answer (want %s):\n%q", i, want, e2e.Tail(a.bytes(), 300))
		}
	}
}

func capture(t *testing.T, e *e2e.Env, ref string) string {
	t.Helper()
	txt, err := e.C.Screen(context.Background(), ref, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	return txt
}

// childOf is the one child of pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	var kids []string
	e2e.WaitFor(t, 10*time.Second, "the shell's child", func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		kids = strings.Fields(string(b))
		return len(kids) == 1
	})
	n, err := strconv.Atoi(kids[0])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
