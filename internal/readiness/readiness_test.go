package readiness

import (
	"testing"
	"time"

	"termkeep/internal/deptest"
	"termkeep/internal/shellmark"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	prompt := shellmark.Status{State: shellmark.AtPrompt, Since: at(1), Marks: 2}
	running := shellmark.Status{State: shellmark.Running, Since: at(5), Marks: 3,
		Running: &shellmark.Command{Line: "sleep 30", Start: at(5)}}
	unknown := shellmark.Status{State: shellmark.Unknown}
	bash := []string{"bash", "--norc"}
	for _, tc := range []struct {
		name string
		in   Input
		want Activity
	}{
		{"at its prompt", Input{Shell: prompt, Integration: true, Command: bash, LastOutput: at(1), Now: at(60), QuietAfter: 2 * time.Second},
			Activity{State: AtPrompt, Since: at(1)}},
		{"a command ended, its shell's prompt hooks running: not at its prompt",
			Input{Shell: shellmark.Status{State: shellmark.Returning, Since: at(8), Marks: 4}, Integration: true, Command: bash, LastOutput: at(8), Now: at(9), QuietAfter: 2 * time.Second},
			Activity{State: Running, Since: at(8), Command: "(the shell's prompt hooks)"}},
		{"a command printing nothing is running, not waiting", Input{Shell: running, Integration: true, Command: bash, LastOutput: at(5), Now: at(40), QuietAfter: 2 * time.Second,
			Screen: &Screen{Line: ""}},
			Activity{State: Running, Since: at(5), Command: "sleep 30"}},
		{"a command asking a question and quiet is waiting", Input{Shell: running, Integration: true, Command: bash, LastOutput: at(7), Now: at(10), QuietAfter: 2 * time.Second,
			Screen: &Screen{Line: "continue? (y/n)", Prompt: true}},
			Activity{State: Waiting, Since: at(7), Command: "sleep 30", LastLine: "continue? (y/n)"}},
		{"a prompt still printing is running", Input{Shell: running, Integration: true, Command: bash, LastOutput: at(9), Now: at(10), QuietAfter: 2 * time.Second,
			Screen: &Screen{Line: ">>> ", Prompt: true}},
			Activity{State: Running, Since: at(5), Command: "sleep 30"}},
		{"a full-screen program, quiet, is waiting", Input{Shell: running, Integration: true, Command: bash, LastOutput: at(6), Now: at(9), QuietAfter: 2 * time.Second,
			Screen: &Screen{Alt: true, Line: ":"}},
			Activity{State: Waiting, Since: at(6), Command: "sleep 30", LastLine: ":"}},
		{"a shell drawing its first prompt slowly is starting, not quiet", Input{Shell: unknown, Integration: true, Command: bash, Created: at(0), LastOutput: at(0), Now: at(7.2), QuietAfter: 2 * time.Second,
			Screen: &Screen{}},
			Activity{State: Starting, Since: at(0)}},
		{"a shell that never marks is judged by its screen after the start wait", Input{Shell: unknown, Integration: true, Command: bash, Created: at(0), LastOutput: at(1), Now: at(30), QuietAfter: 2 * time.Second,
			Screen: &Screen{Line: "$", Prompt: true}},
			Activity{State: Waiting, Since: at(1), Command: "bash --norc", LastLine: "$"}},
		{"no integration, printing", Input{Shell: unknown, Command: []string{"make", "-j8"}, Created: at(0), LastOutput: at(29.5), Now: at(30), QuietAfter: 2 * time.Second},
			Activity{State: Running, Since: at(0), Command: "make -j8"}},
		{"no integration, quiet at a prompt", Input{Shell: unknown, Command: []string{"python3"}, Created: at(0), LastOutput: at(1), Now: at(30), QuietAfter: 2 * time.Second,
			Screen: &Screen{Line: ">>>", Prompt: true}},
			Activity{State: Waiting, Since: at(1), Command: "python3", LastLine: ">>>"}},
		{"no integration, quiet, nothing like a prompt", Input{Shell: unknown, Command: []string{"sleep", "30"}, Created: at(0), LastOutput: at(0), Now: at(30), QuietAfter: 2 * time.Second,
			Screen: &Screen{}},
			Activity{State: Running, Since: at(0), Command: "sleep 30"}},
		// Hostile: a clock that went back, no threshold, no screen looked at.
		{"output stamped after now is not quiet", Input{Shell: running, Command: bash, LastOutput: at(50), Now: at(10), QuietAfter: 2 * time.Second,
			Screen: &Screen{Alt: true}},
			Activity{State: Running, Since: at(5), Command: "sleep 30"}},
		{"no threshold: never quiet", Input{Shell: running, Command: bash, LastOutput: at(0), Now: at(1000),
			Screen: &Screen{Alt: true}},
			Activity{State: Running, Since: at(5), Command: "sleep 30"}},
		{"quiet but the screen not looked at", Input{Shell: running, Command: bash, LastOutput: at(0), Now: at(1000), QuietAfter: time.Second},
			Activity{State: Running, Since: at(5), Command: "sleep 30"}},
		{"running with no command line marked", Input{Shell: shellmark.Status{State: shellmark.Running, Since: at(3), Running: &shellmark.Command{}}, Command: bash, Now: at(4), QuietAfter: time.Second},
			Activity{State: Running, Since: at(3)}},
		{"running with no command at all", Input{Shell: shellmark.Status{State: shellmark.Running, Since: at(3)}, Now: at(4)},
			Activity{State: Running, Since: at(3)}},
		{"an empty input", Input{}, Activity{State: Running}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.in); got != tc.want {
				t.Errorf("Decide:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestDecideKernel: with the kernel's word, the state is what it vouches
// for, whatever the last line reads like; the screen is only a hint.
func TestDecideKernel(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	prompt := shellmark.Status{State: shellmark.AtPrompt, Since: at(1), Marks: 2}
	running := func(line string) shellmark.Status {
		return shellmark.Status{State: shellmark.Running, Since: at(5), Marks: 3, Running: &shellmark.Command{Line: line, Start: at(5)}}
	}
	hooks := shellmark.Status{State: shellmark.Returning, Since: at(8), Marks: 4}
	unknown := shellmark.Status{State: shellmark.Unknown}
	bash := []string{"bash", "--norc"}
	shell := &Kernel{State: ReadingTerminal, Shell: true, Pid: 100, Program: "bash"}
	quietly := func(in Input) Input {
		if in.Command == nil {
			in.Command = bash
		}
		in.LastOutput, in.Now, in.QuietAfter = at(7), at(30), 2*time.Second
		return in
	}
	for _, tc := range []struct {
		name string
		in   Input
		want Activity
	}{
		{"at its prompt, vouched", quietly(Input{Shell: prompt, Integration: true, Kernel: shell}),
			Activity{State: AtPrompt, Since: at(1), Kernel: true}},
		{"marks say prompt, but typing waits unread", quietly(Input{Shell: prompt, Kernel: &Kernel{State: ReadingTerminal, Shell: true, Unread: 3, Pid: 100, Program: "bash"}}),
			Activity{State: ReadingTerminal, Since: at(7), Command: "bash --norc", Kernel: true, Pid: 100, Program: "bash", Unread: 3}},
		{"marks say prompt, but unread is unknown", quietly(Input{Shell: prompt, Kernel: &Kernel{State: ReadingTerminal, Shell: true, Unread: -1, Pid: 100, Program: "bash"}}),
			Activity{State: ReadingTerminal, Since: at(7), Command: "bash --norc", Kernel: true, Pid: 100, Program: "bash"}},
		{"marks say prompt, a job leads the terminal (a bash without PS0)", quietly(Input{Shell: prompt, Kernel: &Kernel{State: Running, Pid: 200, Program: "make"}}),
			Activity{State: Running, Command: "bash --norc", Kernel: true, Pid: 200, Program: "make"}},
		{"Running 120 tests: is running", quietly(Input{Shell: running("make test"), Kernel: &Kernel{State: Running, Pid: 201, Program: "sleep"},
			Screen: &Screen{Line: "Running 120 tests:", Prompt: true}}),
			Activity{State: Running, Since: at(5), Command: "make test", LastLine: "Running 120 tests:", Kernel: true, Pid: 201, Program: "sleep", Hint: HintPrompt}},
		{"> … > is running", quietly(Input{Shell: running("./build"), Kernel: &Kernel{State: Running, Pid: 202, Program: "build"},
			Screen: &Screen{Line: "> … >", Prompt: true}}),
			Activity{State: Running, Since: at(5), Command: "./build", LastLine: "> … >", Kernel: true, Pid: 202, Program: "build", Hint: HintPrompt}},
		{"a question without punctuation is read", quietly(Input{Shell: running("./ask"), Kernel: &Kernel{State: ReadingTerminal, Pid: 203, Program: "ask"},
			Screen: &Screen{Line: "Enter your name"}}),
			Activity{State: ReadingTerminal, Since: at(7), Command: "./ask", LastLine: "Enter your name", Kernel: true, Pid: 203, Program: "ask"}},
		{"rm -i, still printing its question", Input{Shell: running("rm -i x"), Command: bash, LastOutput: at(7), Now: at(7.1), QuietAfter: 2 * time.Second,
			Kernel: &Kernel{State: ReadingTerminal, Pid: 204, Program: "rm"}, Screen: &Screen{Line: "rm: remove regular file 'x'?", Prompt: true}},
			Activity{State: ReadingTerminal, Since: at(7), Command: "rm -i x", LastLine: "rm: remove regular file 'x'?", Kernel: true, Pid: 204, Program: "rm"}},
		{"vim waits on events", quietly(Input{Shell: running("vim x"), Kernel: &Kernel{State: WaitingOnEvents, Pid: 205, Program: "vim"}, Screen: &Screen{Alt: true, Line: "~"}}),
			Activity{State: WaitingOnEvents, Since: at(7), Command: "vim x", LastLine: "~", Kernel: true, Pid: 205, Program: "vim", Hint: HintFullScreen}},
		{"the read builtin: the shell itself reads, its marks say a command runs", quietly(Input{Shell: running("read x"), Kernel: shell}),
			Activity{State: ReadingTerminal, Since: at(7), Command: "read x", Kernel: true, Pid: 100, Program: "bash"}},
		{"prompt hooks sleeping", quietly(Input{Shell: hooks, Kernel: &Kernel{State: Running, Pid: 206, Program: "sleep"}}),
			Activity{State: Running, Since: at(8), Command: "(the shell's prompt hooks)", Kernel: true, Pid: 206, Program: "sleep"}},
		{"a prompt hook reading the terminal", quietly(Input{Shell: hooks, Kernel: &Kernel{State: ReadingTerminal, Shell: true, Pid: 100, Program: "bash"}}),
			Activity{State: ReadingTerminal, Since: at(7), Command: "(the shell's prompt hooks)", Kernel: true, Pid: 100, Program: "bash"}},
		{"sh without marks, reading its terminal: its prompt", quietly(Input{Shell: unknown, Command: []string{"/bin/sh"}, Kernel: &Kernel{State: ReadingTerminal, Shell: true, Pid: 100, Program: "sh"}}),
			Activity{State: AtPrompt, Since: at(7), Kernel: true, Pid: 100, Program: "sh"}},
		{"sh without marks, running a job", quietly(Input{Shell: unknown, Command: []string{"sh"}, Kernel: &Kernel{State: ReadingTerminal, Pid: 300, Program: "rm"}}),
			Activity{State: ReadingTerminal, Since: at(7), Command: "sh", Kernel: true, Pid: 300, Program: "rm"}},
		{"python3 reading its own terminal is no shell's prompt", quietly(Input{Shell: unknown, Command: []string{"python3"}, Kernel: &Kernel{State: WaitingOnEvents, Shell: true, Pid: 100, Program: "python3"},
			Screen: &Screen{Line: ">>>", Prompt: true}}),
			Activity{State: WaitingOnEvents, Since: at(7), Command: "python3", LastLine: ">>>", Kernel: true, Pid: 100, Program: "python3", Hint: HintPrompt}},
		{"sh without marks, not reading its terminal yet", Input{Shell: unknown, Command: []string{"sh"}, Created: at(0), LastOutput: at(0), Now: at(1), QuietAfter: 2 * time.Second,
			Kernel: &Kernel{State: Running, Shell: true, Pid: 100, Program: "sh"}},
			Activity{State: Starting, Since: at(0)}},
		{"sh without marks, busy in its own rc long after", Input{Shell: unknown, Command: []string{"sh"}, Created: at(0), LastOutput: at(0), Now: at(30), QuietAfter: 2 * time.Second,
			Kernel: &Kernel{State: Running, Shell: true, Pid: 100, Program: "sh"}},
			Activity{State: Running, Since: at(0), Command: "sh", Kernel: true, Pid: 100, Program: "sh"}},
		{"a shell still starting", Input{Shell: unknown, Integration: true, Command: bash, Created: at(0), LastOutput: at(0), Now: at(3), QuietAfter: 2 * time.Second, Kernel: shell},
			Activity{State: Starting, Since: at(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.in); got != tc.want {
				t.Errorf("Decide:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestIsShell(t *testing.T) {
	for cmd, want := range map[string]bool{"bash": true, "/bin/sh": true, "-zsh": true, "/usr/bin/fish": true, "python3": false, "": false, "bashful": false} {
		if got := IsShell([]string{cmd}); got != want {
			t.Errorf("IsShell(%q) = %v", cmd, got)
		}
	}
	if IsShell(nil) {
		t.Error("IsShell(nil)")
	}
}

func TestNeedsScreen(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		in   Input
		want bool
	}{
		{"at a prompt", Input{Shell: shellmark.Status{State: shellmark.AtPrompt}, LastOutput: t0, Now: t0.Add(time.Hour), QuietAfter: time.Second}, false},
		{"output flowing", Input{Shell: shellmark.Status{State: shellmark.Running}, LastOutput: t0, Now: t0.Add(time.Millisecond), QuietAfter: time.Second}, false},
		{"quiet and running", Input{Shell: shellmark.Status{State: shellmark.Running}, LastOutput: t0, Now: t0.Add(time.Hour), QuietAfter: time.Second}, true},
		{"starting", Input{Integration: true, Created: t0, LastOutput: t0, Now: t0.Add(3 * time.Second), QuietAfter: time.Second}, false},
		{"quiet, no integration", Input{Created: t0, LastOutput: t0, Now: t0.Add(3 * time.Second), QuietAfter: time.Second}, true},
		{"printing, the kernel says it reads the terminal", Input{Shell: shellmark.Status{State: shellmark.Running}, LastOutput: t0, Now: t0, QuietAfter: time.Second,
			Kernel: &Kernel{State: ReadingTerminal}}, true},
		{"printing, the kernel says it runs", Input{Shell: shellmark.Status{State: shellmark.Running}, LastOutput: t0, Now: t0, QuietAfter: time.Second,
			Kernel: &Kernel{State: Running}}, false},
	} {
		if got := NeedsScreen(tc.in); got != tc.want {
			t.Errorf("%s: NeedsScreen %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestLastLine(t *testing.T) {
	for _, tc := range []struct {
		screen string
		cursor int
		want   string
	}{
		{"a\n$ \n\n", 1, "$"},
		{"row 1\nrow 2\n:   \n", 2, ":"},
		{"output\nmore\n\n\n", 3, "more"}, // the cursor's line is blank
		{"", 0, ""},
		{"x\n", -1, "x"},
		{"x\n", 99, "x"},
	} {
		if got := LastLine(tc.screen, tc.cursor); got != tc.want {
			t.Errorf("LastLine(%q, %d) = %q, want %q", tc.screen, tc.cursor, got, tc.want)
		}
	}
}

// TestImports keeps readiness a pure decision: the server looks, it decides.
func TestImports(t *testing.T) {
	deptest.Forbid(t, "termkeep/internal/readiness", map[string]string{
		"net":          "the server reads the session; readiness only decides",
		"os":           "no I/O: every input is passed in",
		"database/sql": "the registry is the store's business",
	})
}
