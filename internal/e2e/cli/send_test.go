package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// `termkeep send ed ':wq'` gives vim a command, as tmux's send-keys does:
// one line is typed as keys, though vim turns bracketed paste on (a paste
// is text to insert for vim).
func TestSendCommandToVim(t *testing.T) {
	t.Parallel()
	vim := e2e.Vim(t)
	e := e2e.NewEnv(t)
	e.StartServer()
	dir := t.TempDir()
	f := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(f, []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustTk("new", "--name", "ed", "--cwd", dir, "--", vim, "-u", "NONE", "-N", "-i", "NONE", "f.txt")
	e2e.WaitFor(t, 20*time.Second, "vim to show the file", func() bool {
		return strings.HasPrefix(e.MustTk("capture", "ed"), "one\ntwo\n")
	})
	e.MustTk("send", "ed", ":%s/^/x-/")
	e.MustTk("send", "ed", ":wq")
	if _, errs, code := e.Tk("wait", "ed", "--exit", "--timeout", "20s"); code != 0 {
		t.Fatalf("vim did not quit (exit %d: %s); its screen:\n%s", code, errs, e.MustTk("capture", "ed"))
	}
	if b, _ := os.ReadFile(f); string(b) != "x-one\nx-two\n" {
		t.Fatalf("f.txt holds %q, want the substitution written", b)
	}
	if _, errs, code := e.Tk("send", "ed", "--paste", "--no-paste", "x"); code != 2 || !strings.Contains(errs, "--paste and --no-paste") {
		t.Fatalf("--paste --no-paste: exit %d (%s), want a usage error", code, errs)
	}
}
