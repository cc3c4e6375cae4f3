package sessiondir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// meta.json written is meta.json read back, field for field; a missing or
// damaged file is an error that names it, and a write replaces the file
// whole, mode 0600, leaving no temporary file behind.
func TestMetaRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadMeta(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadMeta of an empty directory: %v, want fs.ErrNotExist", err)
	}
	ended := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	code := 130
	want := Meta{
		ID: "s1", Version: 7, HolderPid: 10, Pid: 11, Command: []string{"bash", "-l"}, Cwd: "/tmp",
		Cols: 80, Rows: 24, Env: []string{"LANG=C.UTF-8"}, StartedAt: ended.Add(-time.Hour),
		Name: "web", Workspace: "w", EndedAt: &ended, ExitCode: &code, Signal: 2, Closed: true, End: 1 << 40,
		Interrupted: true, Reason: "stopped by SIGTERM",
	}
	if err := WriteMeta(dir, Meta{ID: "old"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMeta(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, want %+v", got, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != MetaFile {
		t.Fatalf("directory holds %v, want only %s", entries, MetaFile)
	}
	if st, _ := os.Stat(filepath.Join(dir, MetaFile)); st.Mode().Perm() != 0o600 {
		t.Fatalf("meta.json has mode %v, want 0600", st.Mode().Perm())
	}

	os.WriteFile(filepath.Join(dir, MetaFile), []byte(`{"id": "s1", "pid": `), 0o600)
	if _, err := ReadMeta(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, MetaFile)) {
		t.Fatalf("ReadMeta of a cut file: %v, want an error naming it", err)
	}
}

// State reads the end meta.json records: running until an end, then
// closed (a close on purpose), interrupted (the machine or the service
// stopped it) or exited.
func TestMetaState(t *testing.T) {
	ended := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	code := 0
	for _, tc := range []struct {
		m    Meta
		want string
	}{
		{Meta{}, "running"},
		{Meta{Closed: true}, "running"}, // no end recorded yet
		{Meta{Interrupted: true}, "running"},
		{Meta{EndedAt: &ended, ExitCode: &code}, "exited"},
		{Meta{EndedAt: &ended, ExitCode: &code, Closed: true}, "closed"},
		{Meta{EndedAt: &ended, Interrupted: true, Reason: "stopped"}, "interrupted"},
		{Meta{EndedAt: &ended, Closed: true, Interrupted: true}, "closed"}, // never written; a close wins
		{Meta{EndedAt: &ended}, "exited"},
	} {
		if got := tc.m.State(); got != tc.want {
			t.Errorf("State of %+v = %q, want %q", tc.m, got, tc.want)
		}
	}
}
