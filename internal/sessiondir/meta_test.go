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
		Settings: Settings{AutoRestore: true, RestoreCommand: "claude --continue", SizePolicy: "smallest", NoShellIntegration: true},
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

// The settings are meta.json's own fields, under the registry's names; a
// meta.json written before they were kept reads as the registry's
// defaults (shell integration on).
func TestMetaSettings(t *testing.T) {
	dir := t.TempDir()
	old := `{"id":"s1","version":3,"holder_pid":10,"pid":11,"command":["sh"],"cwd":"/","cols":80,"rows":24,"started_at":"2026-01-02T03:04:05Z"}`
	if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Settings != (Settings{}) {
		t.Fatalf("settings of an old meta.json: %+v, want none (shell integration on)", m.Settings)
	}
	m.Settings = Settings{AutoRestore: true, RestoreCommand: "make resume", NoShellIntegration: true}
	if err := WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	for _, want := range []string{`"auto_restore": true`, `"restore_command": "make resume"`, `"no_shell_integration": true`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("meta.json lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "size_policy") || strings.Contains(string(b), "settings") {
		t.Errorf("meta.json has an empty or nested setting:\n%s", b)
	}
}
