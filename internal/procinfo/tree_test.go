package procinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDescendants: the child of a child of this process is found, and so
// is this process itself.
func TestDescendants(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, err := Descendants(os.Getpid()); err != ErrUnsupported {
			t.Fatalf("err = %v, want ErrUnsupported", err)
		}
		return
	}
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	grandchild := strings.TrimSpace(string(buf[:n]))
	defer exec.Command("kill", grandchild).Run()
	pids, err := Descendants(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pids {
		got = append(got, strconv.Itoa(p))
	}
	if !slices.Contains(pids, os.Getpid()) || !slices.Contains(pids, cmd.Process.Pid) || !slices.Contains(got, grandchild) {
		t.Fatalf("Descendants = %v; want this process, %d and %s among them", pids, cmd.Process.Pid, grandchild)
	}
	if pids, err := Descendants(cmd.Process.Pid); err != nil || slices.Contains(pids, os.Getpid()) {
		t.Fatalf("Descendants of the child = %v, %v: its parent is no descendant", pids, err)
	}
	if _, err := Descendants(1 << 30); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

// TestOpenFiles: a file this process holds open is listed by its real
// path (a symlink's target), and closed ones are not.
func TestOpenFiles(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.jsonl")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(link)
	if err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(dir, "closed")
	if g, err := os.Create(closed); err == nil {
		g.Close()
	}
	paths, err := OpenFiles(os.Getpid())
	f.Close()
	if runtime.GOOS != "linux" {
		if err != ErrUnsupported {
			t.Fatalf("err = %v, want ErrUnsupported", err)
		}
		return
	}
	resolved, _ := filepath.EvalSymlinks(real)
	if err != nil || !slices.Contains(paths, resolved) || slices.Contains(paths, link) || slices.Contains(paths, closed) {
		t.Fatalf("OpenFiles = %q, %v; want %s and not %s or %s", paths, err, resolved, link, closed)
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			t.Errorf("OpenFiles lists %q, no path (a pipe or socket)", p)
		}
	}
}

func TestEnviron(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.Env = []string{"CODEX_HOME=/x/y", "A=b=c", "EMPTY="}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	env, err := Environ(cmd.Process.Pid)
	// Start returns once the exec has begun; until the kernel has laid
	// out the new program's memory its environment reads empty.
	for deadline := time.Now().Add(10 * time.Second); err == nil && len(env) == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		env, err = Environ(cmd.Process.Pid)
	}
	if runtime.GOOS != "linux" {
		if err != ErrUnsupported {
			t.Fatalf("err = %v, want ErrUnsupported", err)
		}
		return
	}
	if err != nil || !slices.Equal(env, cmd.Env) {
		t.Fatalf("Environ = %q, %v; want %q", env, err, cmd.Env)
	}
}

func TestParseStatPPid(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"42 (bash) S 7 42 42 34816 42 4194304 1 0 0 0", 7, true},
		// A command name may hold spaces and parentheses: the last ")" ends it.
		{"42 (a) S 9 (b) R 8 1 1", 8, true},
		{"42 (node ) S 1) S 3 42 42", 3, true},
		{"1 (init) S 0 1 1", 0, true},
		{"", 0, false},
		{"42 (bash", 0, false},
		{"42 (bash) S", 0, false},
		{"42 (bash) S x 1", 0, false},
		{"42 (bash) S -3 1", 0, false},
		{"42 (bash) S 99999999999999999999 1", 0, false},
	} {
		got, err := parseStatPPid([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%q: %d, %v; want %d (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzParseStatPPid(f *testing.F) {
	f.Add([]byte("42 (bash) S 7 42 42 34816 42"))
	f.Add([]byte("42 (a) b) S 1 2"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseStatPPid(b)
		if err == nil && n < 0 {
			t.Fatalf("%q: negative pid %d", b, n)
		}
		if err == nil && !strings.Contains(string(b), ")") {
			t.Fatalf("%q: a pid with no command name before it", b)
		}
	})
}

// TestTree: the descendants of a pid in a table of parents, however the
// table is damaged (a cycle, a process its own parent).
func TestTree(t *testing.T) {
	for _, tc := range []struct {
		name    string
		root    int
		parents map[int]int
		want    []int
	}{
		{"alone", 5, map[int]int{5: 1}, []int{5}},
		{"children and grandchildren", 5, map[int]int{5: 1, 6: 5, 7: 6, 8: 1, 9: 5}, []int{5, 6, 7, 9}},
		{"a cycle below", 5, map[int]int{5: 1, 6: 7, 7: 6, 8: 5}, []int{5, 8}},
		{"its own parent", 5, map[int]int{5: 5, 6: 5}, []int{5, 6}},
		{"a cycle through the root", 5, map[int]int{5: 6, 6: 5}, []int{5, 6}},
		{"not in the table", 5, map[int]int{6: 5}, []int{5, 6}},
	} {
		got := tree(tc.root, tc.parents)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
