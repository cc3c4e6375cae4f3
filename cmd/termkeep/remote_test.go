package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A HOST: argument that names no session where one is needed, or one
// where none is, or that is no host at all, is a usage error, found
// before ssh runs.
func TestRemoteUsage(t *testing.T) {
	t.Setenv("TERMKEEP_SSH", "/nonexistent/ssh") // ssh run would exit 1
	for _, args := range [][]string{
		{"attach", "box:"},
		{"attach", ":work"},
		{"attach", "[::1]"},
		{"attach", "-t", "bo x:work"},
		{"ls", "box:work"},
		{"ls", "work"},
		{"ls", "box:", "other:"},
		{"new", "box:work"},
		{"new", "-box:"},
	} {
		if code := run(args); code != exitUsage {
			t.Errorf("termkeep %s: exit %d, want %d", strings.Join(args, " "), code, exitUsage)
		}
	}
}

// new HOST: runs termkeep new there with the flags given here (each
// value of a repeated one), the command after --, and none of this
// machine's (--state-dir), quoted so that the remote shell hands them on
// whole.
func TestNewRemoteForwardsFlags(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "args")
	ssh := filepath.Join(dir, "ssh")
	// sshd's part: the remote command, run by a shell.
	os.WriteFile(ssh, []byte("#!/bin/sh\n[ \"$1 $2 $3\" = '-T -- me@box' ] || exit 9\nexec sh -c \"$4\"\n"), 0o755)
	bin := filepath.Join(dir, "termkeep")
	os.WriteFile(bin, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+got+"\necho abcdefgh\n"), 0o755)
	t.Setenv("TERMKEEP_SSH", ssh)
	t.Setenv("TERMKEEP_REMOTE_BIN", bin)
	code := run([]string{"--state-dir", dir, "new", "me@box:", "--name", "api", "--env", "A=1", "--env", "B=it's $HOME",
		"--cwd", "src", "--", "sh", "-c", "echo hi"})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	b, _ := os.ReadFile(got)
	want := "new\n--cwd=src\n--env=A=1\n--env=B=it's $HOME\n--name=api\n--\nsh\n-c\necho hi\n"
	if string(b) != want {
		t.Errorf("the remote termkeep ran with\n%s\nwant\n%s", b, want)
	}
}
