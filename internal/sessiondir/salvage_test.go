package sessiondir

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"termkeep/internal/outlog"
)

// salvageDir makes the directory of an ended session: meta.json, its
// status record and a log of 5000 bytes written at 100x30.
func salvageDir(t *testing.T) (string, Meta) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "abcd2345")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	l, err := outlog.Open(filepath.Join(dir, LogDir), outlog.Options{Now: func() time.Time { return start }, Cols: 100, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(bytes.Repeat([]byte("x"), 5000)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	ended := start.Add(time.Minute)
	code := 3
	m := Meta{
		ID: "abcd2345", Version: 9, HolderPid: 4242, Pid: 4243, Command: []string{"sh", "-c", "make test"}, Cwd: "/src",
		Cols: 100, Rows: 30, Env: []string{"LANG=C.UTF-8", "PATH=/usr/bin:/bin"}, StartedAt: start, Name: "build", Workspace: "proj",
		Settings: Settings{AutoRestore: true}, EndedAt: &ended, ExitCode: &code, End: 5000,
	}
	if err := WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	w, err := CreateStatus(dir, StatusOf(m), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	return dir, m
}

// A session directory whose meta.json is damaged or gone still tells the
// session: the keys before the damage, the status record's end, the log's
// size and end; what is lost is named, never guessed.
func TestSalvage(t *testing.T) {
	at := func(key string, plus int) func([]byte) []byte {
		return func(b []byte) []byte {
			b[bytes.Index(b, []byte(`"`+key+`"`))+plus] = 0
			return b
		}
	}
	cases := []struct {
		name    string
		damage  func([]byte) []byte // nil: meta.json removed
		status  bool
		unknown []string
		same    []string // keys read back as they were
	}{
		{"NUL in the middle (in env)", at("env", 20), true, []string{"name", "workspace", "settings"}, []string{"command", "cwd", "started_at", "ended_at", "exit_code", "end"}},
		{"NUL in the command", at("command", 14), true, []string{"command", "cwd", "name", "workspace", "settings"}, []string{"holder_pid", "started_at", "ended_at", "exit_code", "end"}},
		{"NUL in the first key", at("id", 1), true, []string{"command", "cwd", "name", "workspace", "settings"}, []string{"holder_pid", "started_at", "ended_at", "exit_code", "end", "cols"}},
		{"meta.json gone", nil, true, []string{"command", "cwd", "name", "workspace", "settings"}, []string{"holder_pid", "started_at", "ended_at", "exit_code", "end", "cols"}},
		{"meta.json and status gone", nil, false, []string{"command", "cwd", "name", "workspace", "settings"}, []string{"end", "cols", "rows", "started_at"}},
		{"a value of the wrong type", func(b []byte) []byte { return bytes.Replace(b, []byte(`"cwd": "/src"`), []byte(`"cwd": 17`), 1) }, true, []string{"cwd"}, []string{"command", "name", "workspace", "end"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, want := salvageDir(t)
			p := filepath.Join(dir, MetaFile)
			if c.damage == nil {
				os.Remove(p)
			} else {
				b, _ := os.ReadFile(p)
				os.WriteFile(p, c.damage(b), 0o600)
				if _, err := ReadMeta(dir); err == nil {
					t.Fatal("meta.json still reads")
				}
			}
			if !c.status {
				os.Remove(filepath.Join(dir, StatusFile))
			}
			got, unknown, err := Salvage(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(unknown, c.unknown) {
				t.Errorf("unknown %v, want %v", unknown, c.unknown)
			}
			if got.ID != "abcd2345" {
				t.Errorf("id %q", got.ID)
			}
			gotJ, wantJ := keys(t, got), keys(t, want)
			for _, k := range c.same {
				if !reflect.DeepEqual(gotJ[k], wantJ[k]) {
					t.Errorf("%s: %v, want %v", k, gotJ[k], wantJ[k])
				}
			}
			for _, k := range unknown {
				if k == "command" && len(got.Command) > 0 || k == "cwd" && got.Cwd != "" {
					t.Errorf("%s unknown but set: %+v", k, got)
				}
			}
			if got.State() != "exited" && c.status {
				t.Errorf("state %s, want exited", got.State())
			}
		})
	}
	// Neither status record nor log: not a session's directory.
	if _, _, err := Salvage(t.TempDir()); err == nil {
		t.Fatal("Salvage of an empty directory succeeded")
	}
}

// keys is m as meta.json's keys and values.
func keys(t *testing.T, m Meta) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzSalvage reads any bytes as meta.json beside a status record and a
// log: Salvage never fails or panics on them, keeps the directory's id
// and the log's end, and never has a command or directory it calls
// unknown.
func FuzzSalvage(f *testing.F) {
	f.Add([]byte(`{"id": "abcd2345", "command": ["sh"], "cwd": "/"}`))
	f.Add([]byte("{\"id\": \"abcd2345\", \"command\": [\"s\x00h\"]"))
	f.Add([]byte(`{"command": 5, "cwd": ["x"], "end": "y", "cols": -1}`))
	f.Add([]byte(`[{"id": "x"}]`))
	f.Add([]byte(`{"id": "abcd2345", "id": "other", "pid": 1e99}`))
	f.Fuzz(func(t *testing.T, meta []byte) {
		dir, _ := salvageDir(t)
		if err := os.WriteFile(filepath.Join(dir, MetaFile), meta, 0o600); err != nil {
			t.Fatal(err)
		}
		m, unknown, err := Salvage(dir)
		if err != nil {
			t.Fatal(err)
		}
		if m.ID != "abcd2345" || m.End < 5000 {
			t.Fatalf("id %q, end %d", m.ID, m.End)
		}
		for _, k := range unknown {
			if k == "command" && len(m.Command) > 0 || k == "cwd" && m.Cwd != "" {
				t.Fatalf("%s unknown but set: %+v", k, m)
			}
		}
	})
}
