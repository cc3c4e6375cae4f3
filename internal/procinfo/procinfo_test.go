package procinfo

import (
	"bytes"
	"os"
	"runtime"
	"testing"
)

func TestCwd(t *testing.T) {
	got, err := Cwd(os.Getpid())
	if runtime.GOOS != "linux" {
		if err != ErrUnsupported {
			t.Fatalf("err = %v, want ErrUnsupported", err)
		}
		return
	}
	want, _ := os.Getwd()
	if err != nil || got != want {
		t.Fatalf("Cwd = %q, %v; want %q", got, err, want)
	}
	if _, err := Cwd(1 << 30); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

func TestCmdline(t *testing.T) {
	argv, err := Cmdline(os.Getpid())
	if err != nil {
		t.Skipf("not supported here: %v", err)
	}
	if len(argv) != len(os.Args) || argv[0] != os.Args[0] {
		t.Fatalf("Cmdline = %q, want %q", argv, os.Args)
	}
}

func TestParent(t *testing.T) {
	got, err := Parent(os.Getpid())
	if runtime.GOOS != "linux" {
		if err != ErrUnsupported {
			t.Fatalf("err = %v, want ErrUnsupported", err)
		}
		return
	}
	if err != nil || got != os.Getppid() {
		t.Fatalf("Parent = %d, %v; want %d", got, err, os.Getppid())
	}
	if _, err := Parent(1 << 30); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

func TestParsePPid(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"Name:\tcat\nState:\tT (stopped)\nTgid:\t7\nPid:\t7\nPPid:\t3\nTracerPid:\t0\n", 3, true},
		{"PPid:\t0", 0, true},
		{"Name:\tPPid: 9\nPPid:\t12\n", 12, true},
		{"", 0, false},
		{"Pid:\t7\n", 0, false},
		{"PPid:\t-4\n", 0, false},
		{"PPid:\tx\n", 0, false},
		{"PPid:\t99999999999999999999999\n", 0, false},
	} {
		got, err := parsePPid([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%q: %d, %v; want %d (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzParsePPid(f *testing.F) {
	f.Add([]byte("Name:\tcat\nPid:\t7\nPPid:\t3\n"))
	f.Add([]byte("PPid:"))
	f.Add([]byte("PPid:\t-1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parsePPid(b)
		if err == nil && n < 0 {
			t.Fatalf("%q: negative pid %d", b, n)
		}
		if err == nil && !bytes.Contains(b, []byte("PPid:")) {
			t.Fatalf("%q: a pid from no PPid line", b)
		}
	})
}
