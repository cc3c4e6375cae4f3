package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestEnsureCreates(t *testing.T) {
	d := Dir(filepath.Join(t.TempDir(), "a", "state"))
	if err := d.Ensure(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{string(d), d.SessionsDir()} {
		if m := mode(t, p); m != 0o700 {
			t.Errorf("%s: mode %04o, want 0700", p, m)
		}
	}
	if err := d.Ensure(); err != nil {
		t.Errorf("a second Ensure: %v", err)
	}
}

// Readable by others is tightened; writable by others is refused with the
// command that fixes it, and nothing is changed.
func TestEnsureModes(t *testing.T) {
	d := Dir(t.TempDir())
	os.Chmod(string(d), 0o755)
	if err := d.Ensure(); err != nil {
		t.Fatalf("a 0755 state directory: %v", err)
	}
	if m := mode(t, string(d)); m != 0o700 {
		t.Errorf("0755 became %04o, want 0700", m)
	}
	for _, m := range []os.FileMode{0o777, 0o770, 0o722, 0o702} {
		os.Chmod(string(d), m)
		err := d.Ensure()
		if err == nil || !strings.Contains(err.Error(), "chmod 700 "+string(d)) {
			t.Errorf("mode %04o: %v, want a refusal saying chmod 700", m, err)
		}
		if got := mode(t, string(d)); got != m {
			t.Errorf("a refused Ensure changed the mode from %04o to %04o", m, got)
		}
	}
	os.Chmod(string(d), 0o700)
	os.Chmod(d.SessionsDir(), 0o777)
	if err := d.Ensure(); err == nil || !strings.Contains(err.Error(), "chmod 700 "+d.SessionsDir()) {
		t.Errorf("sessions/ writable by others: %v", err)
	}
}

func TestEnsureNotADirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "file")
	os.WriteFile(p, nil, 0o600)
	if err := Dir(p).Ensure(); err == nil {
		t.Error("a file accepted as the state directory")
	}
}

// A directory, or a link to one, that belongs to another user is refused.
func TestEnsureOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	d := Dir(t.TempDir())
	os.Chmod(string(d), 0o700)
	os.Chown(string(d), 65534, 65534)
	if err := d.Ensure(); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("a directory of uid 65534: %v", err)
	}
	os.Chown(string(d), 0, 0)

	// A link of the user's own to the user's directory is followed; a link
	// another user owns is not.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(string(d), link)
	if err := Dir(link).Ensure(); err != nil {
		t.Errorf("own link to own directory: %v", err)
	}
	os.Lchown(link, 65534, 65534)
	if err := Dir(link).Ensure(); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("a link of uid 65534: %v", err)
	}
}

// Check judges a directory as Ensure does, but creates and changes
// nothing: a missing directory passes, a foreign or writable one fails.
func TestCheck(t *testing.T) {
	missing := Dir(filepath.Join(t.TempDir(), "none"))
	if err := missing.Check(); err != nil {
		t.Errorf("a missing directory: %v", err)
	}
	if _, err := os.Stat(string(missing)); err == nil {
		t.Error("Check created the directory")
	}
	d := Dir(t.TempDir())
	os.Chmod(string(d), 0o755)
	if err := d.Check(); err != nil {
		t.Errorf("own directory readable by others: %v", err)
	}
	if st, _ := os.Stat(string(d)); st.Mode().Perm() != 0o755 {
		t.Errorf("Check changed the mode to %04o", st.Mode().Perm())
	}
	for _, mode := range []os.FileMode{0o777, 0o722, 0o770, os.ModeSticky | 0o777} {
		os.Chmod(string(d), mode)
		if err := d.Check(); err == nil || !strings.Contains(err.Error(), "writable by other users") {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
	os.Chmod(string(d), 0o700)
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	if err := Dir(f).Check(); err == nil {
		t.Error("a file passed as a state directory")
	}
	if os.Getuid() == 0 {
		os.Chown(string(d), 65534, 65534)
		if err := d.Check(); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("a directory of uid 65534: %v", err)
		}
		os.Chown(string(d), 0, 0)
	}
}
