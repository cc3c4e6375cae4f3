package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/outerterm"
)

// sizedPane is a tmux pane of cols x rows, in a tmux server of the test's
// own.
func sizedPane(t *testing.T, cols, rows int) *tmuxPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: `make test` installs it (apt-get install tmux)")
	}
	p := &tmuxPane{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	p.run("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "-e", "PS1=$ ", "sh")
	p.run("set-option", "-g", "status", "off")
	p.run("resize-window", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows))
	t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	return p
}

// lines is text's rows, trailing blanks trimmed, n of them.
func lines(text string, n int) []string {
	rs := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	out := make([]string, n)
	for i := range n {
		if i < len(rs) {
			out[i] = strings.TrimRight(rs[i], " ")
		}
	}
	return out
}

// atSize is what a pane of cols x rows shows of a session screen (its
// rows, as capture prints them) of scols x srows: clipped, and beyond the
// session's size the marks attach draws.
func atSize(screen []string, scols, srows, cols, rows int) []string {
	mark := string(outerterm.Fill)
	out := make([]string, rows)
	for y := range rows {
		if y >= srows {
			out[y] = strings.Repeat(mark, cols)
			continue
		}
		r := []rune(screen[y])
		r = r[:min(len(r), cols, scols)]
		l := string(r)
		if cols > scols {
			l += strings.Repeat(" ", scols-len(r)) + strings.Repeat(mark, cols-scols)
		}
		out[y] = strings.TrimRight(l, " ")
	}
	return out
}

// Two terminals of different sizes attached to one session running vim:
// each shows the session at the session's size, the smaller one clipped,
// the larger one with the rest marked, and none keeps a stale character
// after the session shrinks. The size goes to whoever attached or typed
// last.
func TestAttachAtTheSessionsSize(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	vim, err := exec.LookPath("vim")
	if err != nil {
		if vim, err = exec.LookPath("vim.tiny"); err != nil {
			t.Fatal("vim is not installed: `make test` installs vim-tiny")
		}
	}
	var text strings.Builder
	for i := range 40 {
		fmt.Fprintf(&text, "line%02d %s\n", i, strings.Repeat(string(rune('a'+i%26)), 80+i))
	}
	file := filepath.Join(t.TempDir(), "long.txt")
	if err := os.WriteFile(file, []byte(text.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustTk("new", "--name", "v", "--size", "80x24", "--", vim, "-u", "NONE", "-N", "-c", "set nowrap", file)
	small, large := sizedPane(t, 60, 20), sizedPane(t, 100, 30)
	attach := e2e.TkBin + " --state-dir " + e.Dir + " attach v"

	notices := map[*tmuxPane]string{}
	// same waits until the pane shows the session as attach should draw
	// it at the session's size now.
	same := func(p *tmuxPane, what string, cols, rows int) {
		t.Helper()
		var want, got []string
		ok := func() bool {
			// termkeep capture's text, through the client (a process per
			// look is slow under -race).
			s := e.Session("v")
			text, err := e.C.Screen(context.Background(), "v", false, 0)
			if err != nil {
				t.Fatal(err)
			}
			want = atSize(lines(text, int(s.Rows)), int(s.Cols), int(s.Rows), cols, rows)
			got = lines(p.screen(false), rows)
			if l := strings.TrimSpace(p.run("display-message", "-p", "#{pane_title}")); strings.HasPrefix(l, "termkeep: ") {
				// A notice in the title says who holds the size.
				notices[p] = l
			}
			return strings.Join(got, "\n") == strings.Join(want, "\n")
		}
		deadline := time.Now().Add(8 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the pane shows\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	size := func(cols, rows int) {
		t.Helper()
		e2e.WaitFor(t, 8*time.Second, fmt.Sprintf("the session at %dx%d", cols, rows), func() bool {
			s := e.Session("v")
			return s.Cols == cols && s.Rows == rows
		})
	}

	small.run("send-keys", attach, "Enter")
	size(60, 20)
	same(small, "the small pane, its own size", 60, 20)
	large.run("send-keys", attach, "Enter")
	size(100, 30)
	same(large, "the large pane, its own size", 100, 30)
	same(small, "the small pane, clipped", 60, 20)
	if n := notices[small]; !strings.Contains(n, "size 100x30 from attach /dev/pts/") {
		t.Errorf("the small pane does not say who holds the size: %q", n)
	}

	// The small pane types: the session takes its size, and the large
	// pane keeps nothing of vim's wider screen.
	small.run("send-keys", "j")
	size(60, 20)
	same(small, "the small pane, its own size again", 60, 20)
	same(large, "the large pane after the shrink", 100, 30)
	for y, l := range lines(large.screen(false), 30) {
		if y == 29 && strings.HasPrefix(l, "[termkeep: ") {
			continue // a notice
		}
		r := []rune(l)
		if y >= 20 && strings.Trim(l, string(outerterm.Fill)) != "" || len(r) > 60 && strings.Trim(string(r[60:]), string(outerterm.Fill)) != "" {
			t.Fatalf("row %d of the large pane keeps stale characters: %q", y, l)
		}
	}
	// The large pane types: the session grows back, and both follow.
	large.run("send-keys", "k")
	size(100, 30)
	same(large, "the large pane, its own size again", 100, 30)
	same(small, "the small pane, clipped again", 60, 20)
}
