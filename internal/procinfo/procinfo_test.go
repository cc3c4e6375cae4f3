package procinfo

import (
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
