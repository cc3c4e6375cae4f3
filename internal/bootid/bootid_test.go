package bootid

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"5b1f0c1e-8d2a-4a57-9a43-1f0e6b7c9d10\n", "5b1f0c1e-8d2a-4a57-9a43-1f0e6b7c9d10", ""},
		{"  spaced \n", "spaced", ""},
		{"no newline", "no newline", ""},
		{"first\nsecond\n", "first", ""},
		{"\r\nlater", "", "no boot id"}, // an empty first line
		{"", "", "no boot id"},
		{"\n\n", "", "no boot id"},
		{"   \t\n", "", "no boot id"},
		{strings.Repeat("x", maxLen), strings.Repeat("x", maxLen), ""},
		{strings.Repeat("x", maxLen+1), "", "longer than any boot id"},
		{"a\x00b", "", "control characters"},
		{"a\x1b[2Jb", "", "control characters"},
		{"a\x7fb", "", "control characters"},
		{"é-ünïcode", "é-ünïcode", ""},
	} {
		got, err := parse("f", []byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parse(%q) = %q, %v; want an error saying %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parse(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestCurrentFollowsTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "boot_id")
	t.Setenv(EnvVar, p)
	if _, err := Current(); err == nil {
		t.Fatal("a missing file gave a boot id")
	}
	for _, id := range []string{"boot-one", "boot-two"} {
		if err := os.WriteFile(p, []byte(id+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := Current(); err != nil || got != id {
			t.Fatalf("Current() = %q, %v; want %q", got, err, id)
		}
	}
}

// The system's own boot id is there, stable, and the same as the
// kernel's file says.
func TestSystem(t *testing.T) {
	t.Setenv(EnvVar, "")
	a, err := Current()
	if err != nil {
		if runtime.GOOS == "linux" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	b, err := Current()
	if err != nil || a != b || a == "" {
		t.Fatalf("two reads: %q and %q (%v)", a, b, err)
	}
	if runtime.GOOS == "linux" {
		raw, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
		if strings.TrimSpace(string(raw)) != a {
			t.Fatalf("Current() = %q, the kernel says %q", a, raw)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"5b1f0c1e-8d2a-4a57-9a43-1f0e6b7c9d10\n", "", "\n", "a\x00", strings.Repeat("y", 200), "boottime-1700000000"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := parse("f", b)
		if err != nil {
			return
		}
		if id == "" || len(id) > maxLen || strings.ContainsAny(id, "\n\r\x00") || id != strings.TrimSpace(id) {
			t.Fatalf("parse(%q) = %q", b, id)
		}
		// What parse accepts, it reads back the same.
		if again, err := parse("f", []byte(id+"\n")); err != nil || again != id {
			t.Fatalf("parse(%q) again = %q, %v", id, again, err)
		}
	})
}
