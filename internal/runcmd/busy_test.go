package runcmd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/shellmark"
)

// A line is typed only at the prompt: the kernel's when it is known, the
// marks' otherwise; every refusal says in one line what the session does.
func TestBusy(t *testing.T) {
	prompt := &api.Shell{State: "prompt"}
	running := &api.Shell{State: "running", Command: "rm -i victim.txt"}
	hooks := &api.Shell{State: "returning"}
	for _, tc := range []struct {
		name string
		sess api.Session
		want string // "" types
	}{
		{"at the prompt the kernel vouches for", api.Session{Shell: prompt, Activity: &api.Activity{State: "at_prompt", Kernel: true}}, ""},
		{"rm -i reads the terminal", api.Session{Shell: running, Activity: &api.Activity{State: "reading_terminal", Kernel: true, Pid: 123, Program: "rm"}},
			`session s is not at its prompt: rm (pid 123) is reading the terminal, running "rm -i victim.txt"`},
		{"a shell without marks whose job reads", api.Session{Shell: &api.Shell{State: "unknown"}, Activity: &api.Activity{State: "reading_terminal", Kernel: true, Pid: 9, Program: "python3"}},
			"session s is not at its prompt: python3 (pid 9) is reading the terminal"},
		{"vim", api.Session{Shell: &api.Shell{State: "running", Command: "vim x"}, Activity: &api.Activity{State: "waiting_on_events", Kernel: true, Pid: 5, Program: "vim"}},
			`session s is not at its prompt: vim (pid 5) waits for input among other events (an editor, a pager, a REPL), running "vim x"`},
		{"prompt marks, typing unread", api.Session{Shell: prompt, Activity: &api.Activity{State: "reading_terminal", Kernel: true, Pid: 1, Program: "bash", Unread: 4}},
			"session s is not at its prompt: 4 bytes typed at it are not read yet"},
		{"a quiet build", api.Session{Shell: &api.Shell{State: "running", Command: "make"}, Activity: &api.Activity{State: "running", Kernel: true, Pid: 7, Program: "sleep"}},
			`session s is running "make", not at its prompt (in the foreground: sleep (pid 7))`},
		{"prompt hooks sleeping", api.Session{Shell: hooks, Activity: &api.Activity{State: "running", Kernel: true, Pid: 8, Program: "sleep"}},
			"session s is not at its prompt: its last command ended, and its prompt hooks still run (in the foreground: sleep (pid 8))"},
		{"starting", api.Session{Shell: &api.Shell{State: "unknown"}, Activity: &api.Activity{State: "starting"}},
			"session s is not at its prompt: its shell has not drawn its first prompt yet"},
		// Without the kernel's word: the marks, as before.
		{"no kernel, at the prompt", api.Session{Shell: prompt, Activity: &api.Activity{State: "at_prompt"}}, ""},
		{"no kernel, no marks", api.Session{Shell: &api.Shell{State: "unknown"}, Activity: &api.Activity{State: "waiting"}}, ""},
		{"no kernel, running", api.Session{Shell: running, Activity: &api.Activity{State: "waiting"}},
			`session s is running "rm -i victim.txt", not at its prompt`},
		{"no kernel, hooks", api.Session{Shell: hooks}, "session s is not at its prompt: its last command ended, and its prompt hooks still run"},
	} {
		got := ""
		if e := busy("s", tc.sess); e != nil {
			got = e.Error()
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// hookServer is a session whose shell stays in its prompt hooks.
type hookServer struct{}

func (hookServer) Get(context.Context, string) (api.Session, error) {
	return api.Session{ID: "s", State: "running", Command: []string{"zsh"}, ShellIntegration: true,
		Shell: &api.Shell{State: "returning"}, Activity: &api.Activity{State: "running", Kernel: true, Pid: 8, Program: "sleep"}}, nil
}

func (hookServer) Send(context.Context, string, api.SendRequest) (api.Sent, error) {
	panic("typed into a shell that is not at its prompt")
}

// A caller whose time runs out while the shell's prompt hooks still run
// is told so, and nothing is typed: not that the server was slow.
func TestStartTimesOutInHooks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Start(context.Background(), ctx, hookServer{}, "s", Spec{Line: "echo hi"}, ShellStartWait)
	var b *BusyError
	if !errors.As(err, &b) || !b.Hooks || !strings.Contains(err.Error(), "prompt hooks still run") {
		t.Fatalf("Start = %v; want the BusyError of the prompt hooks", err)
	}
}

// slowServer answers late (a busy machine), with a shell at its prompt,
// or one that has not drawn its first prompt yet (starting).
type slowServer struct {
	starting bool
	sent     *bool
}

func (s slowServer) Get(ctx context.Context, _ string) (api.Session, error) {
	select {
	case <-time.After(200 * time.Millisecond):
	case <-ctx.Done():
		return api.Session{}, ctx.Err()
	}
	sess := api.Session{ID: "s", State: "running", Command: []string{"bash"}, ShellIntegration: true, Shell: &api.Shell{State: "at_prompt"}}
	if s.starting {
		sess.Shell = &api.Shell{State: string(shellmark.Unknown)}
	}
	return sess, nil
}

func (s slowServer) Send(context.Context, string, api.SendRequest) (api.Sent, error) {
	*s.sent = true
	return api.Sent{}, nil
}

// The command's time (wctx) bounds the wait for the prompt, not the
// server's answers: a server slower to answer than a short timeout is
// no error, and a prompt that does not come in that time types nothing.
func TestStartCommandTimeIsNotTheServers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		starting bool
		wantErr  string
	}{
		{"at its prompt", false, ""},
		{"no prompt yet", true, "did not show its prompt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			var sent bool
			_, err := Start(context.Background(), wctx, slowServer{starting: tc.starting, sent: &sent}, "s", Spec{Line: "echo hi"}, ShellStartWait)
			switch {
			case tc.wantErr == "" && (err != nil || !sent):
				t.Fatalf("Start = %v, typed %v; want the line typed", err, sent)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || sent):
				t.Fatalf("Start = %v, typed %v; want %q and nothing typed", err, sent, tc.wantErr)
			}
		})
	}
}
