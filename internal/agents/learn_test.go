package agents

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const (
	u1 = "019a6f3c-2e8d-7a4f-9e1c-3b5a7d2e1f0a"
	u2 = "019a6f3d-0000-7a4f-9e1c-3b5a7d2e1f0b"
)

// TestRolloutID: which paths name a codex conversation's rollout file
// below the sessions directory, hostile ones included.
func TestRolloutID(t *testing.T) {
	const dir = "/home/u/.codex/sessions"
	for _, tc := range []struct {
		name, path string
		id, stamp  string
	}{
		{"a rollout", dir + "/2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl", u1, "2026-11-26T10-00-00"},
		{"the uuid in a directory's name", dir + "/2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl/x", "", ""},
		{"the uuid as a directory", dir + "/2026/11/" + u1 + "/notes.jsonl", "", ""},
		{"a tail that is no uuid", dir + "/2026/11/26/rollout-2026-11-26T10-00-00-not-a-uuid-at-all-but-36-long.jsonl", "", ""},
		{"an uppercase uuid", dir + "/2026/11/26/rollout-2026-11-26T10-00-00-" + strings.ToUpper(u1) + ".jsonl", "", ""},
		{"a uuid too short", dir + "/2026/11/26/rollout-2026-11-26T10-00-00-" + u1[1:] + ".jsonl", "", ""},
		{"outside the sessions directory", "/home/u/.codex/archived_sessions/2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl", "", ""},
		{"a sibling named like it", dir + "-old/2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl", "", ""},
		{"climbing out", dir + "/../x/2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl", "", ""},
		{"directly in it", dir + "/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl", "", ""},
		{"too deep", dir + "/a/2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl", "", ""},
		{"deleted under it", dir + "/2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl (deleted)", "", ""},
		{"another suffix", dir + "/2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".json", "", ""},
		{"a bad time", dir + "/2026/11/26/rollout-2026-11-26X10-00-00-" + u1 + ".jsonl", "", ""},
		{"no time", dir + "/2026/11/26/rollout-" + u1 + ".jsonl", "", ""},
		{"another name", dir + "/2026/11/26/history-2026-11-26T10-00-00-" + u1 + ".jsonl", "", ""},
		{"relative", "2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl", "", ""},
		{"empty", "", "", ""},
	} {
		id, stamp, ok := rolloutID(dir, tc.path)
		if ok != (tc.id != "") || id != tc.id || stamp != tc.stamp {
			t.Errorf("%s: %q, %q, %v; want %q, %q", tc.name, id, stamp, ok, tc.id, tc.stamp)
		}
	}
}

// TestNewestRollout: among the rollouts a session holds open, the newest
// wins (codex's /new starts another while the first may stay open); two
// of the same second are ambiguous, and nothing is chosen.
func TestNewestRollout(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []rollout
		want string
		err  bool
	}{
		{"none", nil, "", false},
		{"one", []rollout{{u1, "2026-11-26T10-00-00"}}, u1, false},
		{"the same file twice", []rollout{{u1, "2026-11-26T10-00-00"}, {u1, "2026-11-26T10-00-00"}}, u1, false},
		{"the newest", []rollout{{u2, "2026-11-26T10-05-00"}, {u1, "2026-11-26T10-00-00"}}, u2, false},
		{"the newest, last", []rollout{{u1, "2026-11-26T09-59-59"}, {u2, "2026-11-27T00-00-00"}}, u2, false},
		{"two in one second", []rollout{{u1, "2026-11-26T10-00-00"}, {u2, "2026-11-26T10-00-00"}}, "", true},
		{"two in one second, older than a third", []rollout{{u1, "2026-11-26T10-00-00"}, {u2, "2026-11-26T10-00-00"}, {id, "2026-11-26T10-00-01"}}, id, false},
	} {
		got, err := newestRollout(tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: %q, %v; want %q (error %v)", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// fakeProcs is a session's processes as a table.
type fakeProcs struct {
	tree  []int
	files map[int][]string
	env   []string
	err   error
}

func (f fakeProcs) Descendants(pid int) ([]int, error)  { return f.tree, f.err }
func (f fakeProcs) OpenFiles(pid int) ([]string, error) { return f.files[pid], nil }
func (f fakeProcs) Environ(pid int) ([]string, error)   { return f.env, nil }

// TestConversation: the id a running codex session holds open, found
// below the child's CODEX_HOME (else ~/.codex), in any of its processes.
func TestConversation(t *testing.T) {
	codex, _ := Lookup("codex")
	claude, _ := Lookup("claude")
	home := t.TempDir()
	custom := t.TempDir()
	for _, d := range []string{home + "/.codex/sessions/2026/11/26", custom + "/sessions/2026/11/26"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	roll := func(base, stamp, id string) string {
		return base + "/sessions/2026/11/26/rollout-" + stamp + "-" + id + ".jsonl"
	}
	for _, tc := range []struct {
		name  string
		p     Preset
		procs fakeProcs
		want  string
		err   bool
	}{
		{"held by the agent's child process", codex, fakeProcs{tree: []int{10, 11},
			files: map[int][]string{10: {"/dev/pts/3"}, 11: {"/dev/null", roll(home+"/.codex", "2026-11-26T10-00-00", u1)}},
			env:   []string{"HOME=" + home}}, u1, false},
		{"CODEX_HOME wins", codex, fakeProcs{tree: []int{10},
			files: map[int][]string{10: {roll(home+"/.codex", "2026-11-26T10-00-00", u1), roll(custom, "2026-11-26T09-00-00", u2)}},
			env:   []string{"HOME=" + home, "CODEX_HOME=" + custom}}, u2, false},
		{"the newest of two", codex, fakeProcs{tree: []int{10, 11},
			files: map[int][]string{10: {roll(home+"/.codex", "2026-11-26T10-00-00", u1)}, 11: {roll(home+"/.codex", "2026-11-26T10-30-00", u2)}},
			env:   []string{"HOME=" + home}}, u2, false},
		{"two of one second", codex, fakeProcs{tree: []int{10},
			files: map[int][]string{10: {roll(home+"/.codex", "2026-11-26T10-00-00", u1), roll(home+"/.codex", "2026-11-26T10-00-00", u2)}},
			env:   []string{"HOME=" + home}}, "", true},
		{"none yet", codex, fakeProcs{tree: []int{10}, files: map[int][]string{10: {"/dev/pts/3"}}, env: []string{"HOME=" + home}}, "", false},
		{"another home's", codex, fakeProcs{tree: []int{10},
			files: map[int][]string{10: {roll(custom, "2026-11-26T10-00-00", u1)}}, env: []string{"HOME=" + home}}, "", false},
		{"a relative CODEX_HOME", codex, fakeProcs{tree: []int{10},
			files: map[int][]string{10: {roll(home+"/.codex", "2026-11-26T10-00-00", u1)}}, env: []string{"HOME=" + home, "CODEX_HOME=.codex"}}, "", false},
		{"no home at all", codex, fakeProcs{tree: []int{10},
			files: map[int][]string{10: {"/.codex/sessions/2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl"}}}, "", false},
		{"processes unknown", codex, fakeProcs{err: errors.New("gone")}, "", true},
		{"claude is never learned", claude, fakeProcs{tree: []int{10},
			files: map[int][]string{10: {roll(home+"/.codex", "2026-11-26T10-00-00", u1)}}, env: []string{"HOME=" + home}}, "", false},
	} {
		got, err := tc.p.Conversation(10, tc.procs)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: %q, %v; want %q (error %v)", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// withEnv is the system's processes with the environment given: a test
// cannot start itself again with another one.
type withEnv struct {
	Processes
	env []string
}

func (w withEnv) Environ(int) ([]string, error) { return w.env, nil }

// TestConversationSymlinks: with the real system, a rollout this process
// holds open is found through a symlinked CODEX_HOME, and a rollout-named
// symlink to a file elsewhere is not (the kernel names the file it points
// to).
func TestConversationSymlinks(t *testing.T) {
	if runtime.GOOS != "linux" {
		codex, _ := Lookup("codex")
		if got, err := codex.Conversation(os.Getpid(), System); got != "" || err == nil {
			t.Fatalf("off Linux: %q, %v; want nothing learned", got, err)
		}
		return
	}
	codex, _ := Lookup("codex")
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "codex-home")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	day := filepath.Join(real, "sessions", "2026", "11", "26")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "rollout-2026-11-26T11-00-00-"+u2+".jsonl")
	decoy := filepath.Join(day, "rollout-2026-11-26T11-00-00-"+u2+".jsonl")
	if err := os.Symlink(elsewhere, decoy); err != nil {
		t.Fatal(err)
	}
	procs := withEnv{System, []string{"HOME=/nonexistent", "CODEX_HOME=" + link}}
	d, err := os.Create(decoy)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got, err := codex.Conversation(os.Getpid(), procs); got != "" || err != nil {
		t.Fatalf("through a symlink to elsewhere: %q, %v; want nothing", got, err)
	}
	f, err := os.Create(filepath.Join(link, "sessions", "2026", "11", "26", "rollout-2026-11-26T10-00-00-"+u1+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, err := codex.Conversation(os.Getpid(), procs); got != u1 || err != nil {
		t.Fatalf("through a symlinked CODEX_HOME: %q, %v; want %s", got, err, u1)
	}
}

// TestLearned: the restore command a codex session gets once its id is
// learned, and when the session is not termkeep's to pin.
func TestLearned(t *testing.T) {
	codex, _ := Lookup("codex")
	claude, _ := Lookup("claude")
	for _, tc := range []struct {
		name          string
		p             Preset
		command       []string
		restore, conv string
		learned, want string
		ok            bool
	}{
		{"first found", codex, []string{"/opt/bin/codex"}, "", "", u1, "codex resume " + u1, true},
		{"with arguments", codex, []string{"/opt/bin/codex", "--model", "o3 mini"}, "", "", u1, "codex resume " + u1 + " --model 'o3 mini'", true},
		{"a newer one (/new)", codex, []string{"/opt/bin/codex"}, "codex resume " + u1, u1, u2, "codex resume " + u2, true},
		{"the user's own restore command", codex, []string{"/opt/bin/codex"}, "codex resume --last", "", u1, "", false},
		{"a restore command not of the recorded id", codex, []string{"/opt/bin/codex"}, "codex resume " + u2, u1, u2, "", false},
		{"the arguments chose one", codex, []string{"/opt/bin/codex", "resume", u1}, "", "", u1, "", false},
		{"a hostile id", codex, []string{"/opt/bin/codex"}, "", "", "x; rm -rf ~", "", false},
		{"no command", codex, nil, "", "", u1, "", false},
		{"claude is pinned up front", claude, []string{"/opt/bin/claude", "--session-id", u1}, "claude --resume " + u1, u1, u2, "", false},
	} {
		got, ok := tc.p.Learned(tc.command, tc.restore, tc.conv, tc.learned)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
		// Whether to look at all does not depend on what is found.
		if learns := tc.p.Learns(tc.command, tc.restore, tc.conv); learns != (tc.ok || tc.learned != u1 && tc.learned != u2) {
			t.Errorf("%s: learns %v", tc.name, learns)
		}
	}
}

// TestNotLearned: a codex session whose id was never found restores with
// a fresh start and a note, not with the directory's latest conversation.
func TestNotLearned(t *testing.T) {
	codex, _ := Lookup("codex")
	claude, _ := Lookup("claude")
	for _, tc := range []struct {
		name    string
		p       Preset
		command []string
		restore string
		note    bool
	}{
		{"never found", codex, []string{"/opt/bin/codex"}, "", true},
		{"the user's own restore command", codex, []string{"/opt/bin/codex"}, "codex resume --last", false},
		{"the arguments chose one", codex, []string{"/opt/bin/codex", "resume", u1}, "", false},
		{"claude", claude, []string{"/opt/bin/claude"}, "", false},
	} {
		note := tc.p.NotLearned(tc.command, tc.restore)
		if (note != "") != tc.note || (note != "" && !strings.Contains(note, "starting a new one")) {
			t.Errorf("%s: note %q", tc.name, note)
		}
	}
}

func FuzzRolloutID(f *testing.F) {
	const dir = "/h/.codex/sessions"
	f.Add(dir + "/2026/11/26/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl")
	f.Add(dir + "/a/b/c/rollout-2026-11-26T10-00-00-" + u1 + ".jsonl (deleted)")
	f.Add(dir + "/../../rollout-x.jsonl")
	f.Fuzz(func(t *testing.T, path string) {
		id, stamp, ok := rolloutID(dir, path)
		if !ok {
			if id != "" || stamp != "" {
				t.Fatalf("%q: %q, %q from no rollout", path, id, stamp)
			}
			return
		}
		if !isUUID(id) || CheckConversation(id) != nil || !isStamp(stamp) ||
			!strings.HasPrefix(path, dir+"/") || !strings.HasSuffix(path, "/rollout-"+stamp+"-"+id+".jsonl") ||
			strings.Contains(path, "/../") || strings.Count(path[len(dir):], "/") != 4 {
			t.Fatalf("%q: %q, %q", path, id, stamp)
		}
	})
}
