package shellinit

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestKind(t *testing.T) {
	for _, tt := range []struct {
		command []string
		want    string
	}{
		{nil, ""},
		{[]string{"bash"}, "bash"},
		{[]string{"/usr/bin/zsh"}, "zsh"},
		{[]string{"/usr/local/bin/fish"}, "fish"},
		{[]string{"bash", "-l"}, "bash"},
		{[]string{"bash", "--login", "-i"}, "bash"},
		{[]string{"zsh", "-il"}, "zsh"},
		{[]string{"zsh", "--interactive"}, "zsh"},
		{[]string{"fish", "--login"}, "fish"},
		{[]string{"bash", "--interactive"}, ""}, // not a bash option
		{[]string{"bash", "-c", "echo hi"}, ""},
		{[]string{"bash", "script.sh"}, ""},
		{[]string{"zsh", "-l", "script.zsh"}, ""},
		{[]string{"fish", "-c", "echo hi"}, ""},
		{[]string{"bash", "--norc"}, ""},
		{[]string{"sh"}, ""},
		{[]string{"/bin/dash"}, ""},
		{[]string{"vim", "bash"}, ""},
		{[]string{"bash-5.2"}, ""},
		{[]string{""}, ""},
	} {
		if got := Kind(tt.command); got != tt.want {
			t.Errorf("Kind(%q) = %q, want %q", tt.command, got, tt.want)
		}
	}
}

func TestSetupNotAShell(t *testing.T) {
	dir := t.TempDir()
	for _, command := range [][]string{{"vim"}, {"bash", "-c", "true"}, nil} {
		argv, env, ok, err := Setup(command, dir, filepath.Join(dir, "history"), nil)
		if argv != nil || env != nil || ok || err != nil {
			t.Errorf("Setup(%q) = %q, %q, %v, %v; want nil, nil, false, nil", command, argv, env, ok, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Setup of no shell left %d files in the session directory", len(ents))
	}
}

// TestSetupFiles checks what Setup writes and returns, twice over as a
// restore would call it.
func TestSetupFiles(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history")
	shell := filepath.Join(dir, "shell")
	zdir := filepath.Join(shell, "zsh")
	for range 2 {
		argv, env, ok, err := Setup([]string{"/bin/bash", "-il"}, dir, hist, nil)
		if !ok || err != nil {
			t.Fatalf("Setup bash: %v, %v", ok, err)
		}
		if want := []string{"/bin/bash", "--rcfile", filepath.Join(shell, "bashrc"), "-i"}; !slices.Equal(argv, want) {
			t.Errorf("bash argv %q, want %q", argv, want)
		}
		if want := []string{"TERMKEEP_HISTFILE=" + hist, "TERMKEEP_BASH_LOGIN=1"}; !slices.Equal(env, want) {
			t.Errorf("bash env %q, want %q", env, want)
		}

		// An environment saved with an earlier run's entries keeps the
		// user's ZDOTDIR, not the wrapper's.
		for _, tt := range []struct{ env, want []string }{
			{nil, []string{"ZDOTDIR=" + zdir, "TERMKEEP_ZDOTDIR="}},
			{[]string{"ZDOTDIR=/old", "ZDOTDIR=/u"}, []string{"ZDOTDIR=" + zdir, "TERMKEEP_ZDOTDIR=/u"}},
			{[]string{"ZDOTDIR=" + zdir, "TERMKEEP_ZDOTDIR=/u"}, []string{"ZDOTDIR=" + zdir, "TERMKEEP_ZDOTDIR=/u"}},
		} {
			argv, env, ok, err = Setup([]string{"zsh", "-l"}, dir, hist, tt.env)
			if !ok || err != nil {
				t.Fatalf("Setup zsh: %v, %v", ok, err)
			}
			if want := []string{"zsh", "-l"}; !slices.Equal(argv, want) {
				t.Errorf("zsh argv %q, want %q", argv, want)
			}
			if want := append([]string{"TERMKEEP_HISTFILE=" + hist}, tt.want...); !slices.Equal(env, want) {
				t.Errorf("zsh env for %q: %q, want %q", tt.env, env, want)
			}
		}

		argv, env, ok, err = Setup([]string{"fish"}, dir, hist, nil)
		if !ok || err != nil {
			t.Fatalf("Setup fish: %v, %v", ok, err)
		}
		if want := []string{"fish", "--init-command", "source '" + filepath.Join(shell, "init.fish") + "'"}; !slices.Equal(argv, want) {
			t.Errorf("fish argv %q, want %q", argv, want)
		}
		if len(env) != 2 || !regexp.MustCompile(`^TERMKEEP_FISH_HISTORY=termkeep_[0-9a-f]{16}$`).MatchString(env[1]) {
			t.Errorf("fish env %q, want TERMKEEP_HISTFILE and a TERMKEEP_FISH_HISTORY name", env)
		}
	}

	for _, p := range []string{shell, zdir} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a directory, mode 0700", p, st.Mode(), err)
		}
	}
	var files []string
	for _, p := range []string{shell, zdir} {
		ents, _ := os.ReadDir(p)
		for _, e := range ents {
			if !e.IsDir() {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	files = append(files, hist)
	var names []string
	for _, p := range files {
		names = append(names, strings.TrimPrefix(p, dir+"/"))
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, st.Mode().Perm())
		}
	}
	want := []string{"shell/bashrc", "shell/init.fish", "shell/zsh/.zlogin", "shell/zsh/.zprofile", "shell/zsh/.zshenv", "shell/zsh/.zshrc", "shell/zsh/termkeep.zsh", "history"}
	if !slices.Equal(names, want) {
		t.Errorf("files %q, want %q", names, want)
	}
}

// A fish history name stands for one history file, and the fish command
// string survives a quote in the path.
func TestSetupFishNames(t *testing.T) {
	base := t.TempDir()
	name := func(dir string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		argv, env, _, err := Setup([]string{"fish"}, dir, filepath.Join(dir, "history"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := `source '` + strings.ReplaceAll(filepath.Join(dir, "shell", "init.fish"), `'`, `\'`) + `'`; argv[2] != want {
			t.Errorf("fish command %s, want %s", argv[2], want)
		}
		return env[1]
	}
	a, b := name(filepath.Join(base, "a")), name(filepath.Join(base, "it's"))
	if a == b || a != name(filepath.Join(base, "a")) {
		t.Errorf("fish history names %s, %s, %s: want one per history file, stable", a, b, name(filepath.Join(base, "a")))
	}
}

// shellCase is what TestShells needs to know of one shell.
type shellCase struct {
	name   string
	rcFile string // the user's rc file, relative to HOME
	rc     string // its content: sets TK_MARK, alias tkalias, a hook, a prompt
	// resource is the line that sources the integration again in a
	// running shell, given the session directory.
	resource func(dir string) string
}

var shellCases = []shellCase{{
	name:   "bash",
	rcFile: ".bashrc",
	rc: `set -u
export TK_MARK=user-rc-loaded
alias tkalias='echo alias-works'
tk_hook() { TK_HOOK="ran-$?"; }
PROMPT_COMMAND=tk_hook
PS1='tkprompt> '
`,
	resource: func(dir string) string { return "source '" + dir + "/shell/bashrc'" },
}, {
	name:   "zsh",
	rcFile: ".zshrc",
	rc: `setopt nounset
export TK_MARK=user-rc-loaded
alias tkalias='echo alias-works'
tk_hook() { TK_HOOK="ran-$?" }
precmd_functions+=(tk_hook)
tk_pre() { TK_PRE=1 }
preexec_functions+=(tk_pre)
PS1='tkprompt> '
`,
	resource: func(dir string) string { return "source '" + dir + "/shell/zsh/termkeep.zsh'" },
}, {
	name:   "fish",
	rcFile: ".config/fish/config.fish",
	rc: `set -gx TK_MARK user-rc-loaded
alias tkalias 'echo alias-works'
function tk_hook --on-event fish_postexec
    set -g TK_HOOK ran-$status
end
function fish_prompt
    echo -n 'tkprompt> '
end
`,
	resource: func(dir string) string { return "source '" + dir + "/shell/init.fish'" },
}}

// TestShells runs each shell with its integration in a real pty: the
// user's rc file is loaded and left alone, the working directory is
// reported, commands are marked, and the history outlives the shell.
func TestShells(t *testing.T) {
	for _, sc := range shellCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			testShell(t, sc)
		})
	}
}

func testShell(t *testing.T, sc shellCase) {
	path, err := exec.LookPath(sc.name)
	if err != nil {
		t.Skipf("%s is not installed (apt-get install %s; make test installs it): %v", sc.name, sc.name, err)
	}
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	rcPath := filepath.Join(home, sc.rcFile)
	sess := filepath.Join(tmp, "session")
	hist := filepath.Join(sess, "history")
	work := filepath.Join(tmp, "a b", "é%")
	for _, d := range []string{filepath.Dir(rcPath), sess, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(rcPath, []byte(sc.rc), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm"}
	start := func() *term {
		t.Helper()
		argv, addEnv, ok, err := Setup([]string{path}, sess, hist, env)
		if !ok || err != nil {
			t.Fatalf("Setup(%s): ok %v, %v", path, ok, err)
		}
		tm := startTerm(t, argv, append(slices.Clip(env), addEnv...), tmp)
		tm.expect(markB)
		return tm
	}

	tm := start()
	out := tm.run("cd '" + filepath.Join(tmp, "a b") + "'")
	osc7 := func(path string) *regexp.Regexp {
		return regexp.MustCompile(`\x1b\]7;file://[^/\x07\x1b]*` + regexp.QuoteMeta((&url.URL{Path: path}).EscapedPath()) + `\x1b\\`)
	}
	if want := osc7(filepath.Join(tmp, "a b")); !want.Match(out) || !bytes.Contains(out, []byte("/a%20b\x1b\\")) {
		t.Errorf("after cd, no OSC 7 %q in %q", want, out)
	}
	// A glob, so that no non-ASCII byte is typed.
	if out := tm.run("cd ./*%"); !bytes.Contains(out, []byte("/a%20b/%C3%A9%25\x1b\\")) {
		t.Errorf("after cd, no OSC 7 for %s in %q", work, out)
	}
	if out := tm.run("false"); !bytes.Contains(out, []byte(markD+"1\a")) {
		t.Errorf("false: no 133;D;1 in %q", out)
	}
	out = tm.run(`echo "mark=$TK_MARK hook=$TK_HOOK"; tkalias`)
	for _, want := range []string{"mark=user-rc-loaded hook=ran-1", "alias-works"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("no %q (the user's rc file and hook, with the status of false) in %q", want, out)
		}
	}
	if !regexp.MustCompile(`133;A\x07.*tkprompt> .*133;B\x07$`).Match(out) {
		t.Errorf("the user's prompt is not between 133;A and 133;B in %q", out)
	}

	// Sourced again, the integration marks each command once.
	tm.run(sc.resource(sess))
	out = tm.run("false")
	for _, m := range []string{"\x1b]133;A\a", markB, "\x1b]133;C\a", markD + "1\a"} {
		if n := bytes.Count(out, []byte(m)); n != 1 {
			t.Errorf("sourced twice, a command has %d of %q, want 1: %q", n, m, out)
		}
	}

	id := fmt.Sprint(time.Now().UnixNano())
	tm.run("echo hist-one-" + id)
	if out := tm.run("echo hist-two-" + id + " | tr a-z A-Z"); !bytes.Contains(out, []byte("HIST-TWO-"+id)) {
		t.Errorf("no HIST-TWO-%s in %q", id, out)
	}
	tm.exit()
	first := tm.output()

	b, err := os.ReadFile(hist)
	if err != nil {
		t.Fatalf("history file: %v", err)
	}
	for _, want := range []string{"echo hist-one-" + id, "echo hist-two-" + id + " | tr a-z A-Z"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("history file has no %q:\n%s", want, b)
		}
	}
	if sc.name == "fish" {
		// fish's own file for the session's history name goes too: the
		// session's history file alone must bring the commands back.
		native, _ := filepath.Glob(filepath.Join(home, ".local/share/fish/termkeep_*_history"))
		if len(native) != 1 {
			t.Fatalf("fish history files %q, want one termkeep_*_history", native)
		}
		// Forget (what removing the session does) deletes it.
		if err := Forget(hist, []string{"HOME=" + home}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(native[0]); !os.IsNotExist(err) {
			t.Fatalf("Forget left %s: %v", native[0], err)
		}
	}

	// A restore: a new shell with the same Setup.
	tm = start()
	tm.send("\x1b[A") // up-arrow: the last command
	if out := tm.run(""); !bytes.Contains(out, []byte("HIST-TWO-"+id)) {
		t.Errorf("up-arrow and Enter in the restored shell did not run the last command: %q", out)
	}
	out = tm.run("history | cat")
	for _, want := range []string{"echo hist-one-" + id, "echo hist-two-" + id} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("history in the restored shell has no %q: %q", want, out)
		}
	}
	tm.exit()

	if b, err := os.ReadFile(rcPath); err != nil || string(b) != sc.rc {
		t.Errorf("the user's rc file changed: %q, %v", b, err)
	}
	for _, out := range [][]byte{first, tm.output()} {
		checkMarks(t, out)
		for _, bad := range []string{"__termkeep", "unbound variable", "parameter not set", "not found", "Unknown command", "rror"} {
			if i := bytes.Index(out, []byte(bad)); i >= 0 {
				t.Errorf("the shell said %q: %q", bad, out[max(0, i-200):min(len(out), i+200)])
			}
		}
	}
}

var oscRE = regexp.MustCompile(`\x1b\](7|133);([^\x07\x1b]*)(\x07|\x1b\\)?`)

// checkMarks checks the OSC 133 marks of a shell's output: terminated by
// BEL, in order (A, B, then C and D;STATUS for a command, or A again for
// an empty line), and OSC 7 terminated by ST.
func checkMarks(t *testing.T, out []byte) {
	t.Helper()
	prev := ""
	for _, m := range oscRE.FindAllSubmatch(out, -1) {
		kind, arg, end := string(m[1]), string(m[2]), string(m[3])
		if kind == "7" {
			if end != "\x1b\\" {
				t.Errorf("OSC 7;%s ended by %q, want ST", arg, end)
			}
			continue
		}
		if end != "\a" {
			t.Errorf("OSC 133;%s ended by %q, want BEL", arg, end)
		}
		mark, status, _ := strings.Cut(arg, ";")
		ok := false
		switch mark {
		case "A":
			ok = prev == "" || prev == "B" || prev == "D"
		case "B":
			ok = prev == "A"
		case "C":
			ok = prev == "B"
		case "D":
			ok = prev == "C" && regexp.MustCompile(`^[0-9]+$`).MatchString(status)
		}
		if !ok {
			t.Errorf("OSC 133;%s after %q", arg, prev)
		}
		prev = mark
	}
	if prev == "" {
		t.Errorf("no OSC 133 marks in %q", out)
	}
}

// TestStartupFiles checks that the wrappers read the user's startup files
// as the shell itself would (login files, a ZDOTDIR from the environment
// or from ~/.zshenv), leave ZDOTDIR as the user's code set it, and keep
// their own variables out of the environment of programs.
func TestStartupFiles(t *testing.T) {
	for _, tt := range []struct {
		name    string
		command []string
		files   map[string]string // relative to HOME; "~" in contents is HOME
		env     []string          // "~" is HOME
		line    string
		want    string // "~" is HOME, "$hist" the history file
	}{{
		name:    "bash login",
		command: []string{"bash", "-l"},
		files: map[string]string{
			".bash_profile": "TK=profile\n",
			".bashrc":       "TK=bashrc\n",
		},
		line: `echo "tk=$TK hf=$HISTFILE env=$(env | grep -c TERMKEEP_)"`,
		want: "tk=profile hf=$hist env=0",
	}, {
		name:    "zsh login, ZDOTDIR from .zshenv",
		command: []string{"zsh", "-l"},
		files: map[string]string{
			".zshenv":        "ZDOTDIR=~/zdot\n",
			"zdot/.zprofile": "TKP=zprofile\n",
			"zdot/.zshrc":    "TKR=zshrc\n",
			"zdot/.zlogin":   "TKL=$ZDOTDIR\n",
			".zshrc":         "TKR=wrong\n",
		},
		line: `echo "p=$TKP r=$TKR l=$TKL z=$ZDOTDIR hf=$HISTFILE env=$(env | grep -c TERMKEEP_)"`,
		want: "p=zprofile r=zshrc l=~/zdot z=~/zdot hf=$hist env=0",
	}, {
		name:    "zsh, ZDOTDIR from the environment",
		command: []string{"zsh"},
		files: map[string]string{
			"zd/.zshenv":   "TKE=$ZDOTDIR\n",
			"zd/.zshrc":    "TKR=zshrc\n",
			"zd/.zprofile": "TKP=wrong\n",
		},
		env:  []string{"ZDOTDIR=~/zd"},
		line: `echo "e=$TKE r=$TKR p=${TKP-} z=$ZDOTDIR env=$(env | grep -c TERMKEEP_)"`,
		want: "e=~/zd r=zshrc p= z=~/zd env=0",
	}, {
		name:    "zsh, no startup files",
		command: []string{"zsh"},
		line:    `echo "z=${ZDOTDIR-unset} env=$(env | grep -c TERMKEEP_)"`,
		want:    "z=unset env=0",
	}, {
		name:    "fish login",
		command: []string{"fish", "-l"},
		files:   map[string]string{".config/fish/config.fish": "status is-login; and set -g TK login\n"},
		line:    `echo "tk=$TK env="(env | grep -c TERMKEEP_)`,
		want:    "tk=login env=0",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, err := exec.LookPath(tt.command[0])
			if err != nil {
				t.Skipf("%s is not installed (apt-get install %s; make test installs it): %v", tt.command[0], tt.command[0], err)
			}
			tmp := t.TempDir()
			home := filepath.Join(tmp, "home")
			sess := filepath.Join(tmp, "session")
			hist := filepath.Join(sess, "history")
			tilde := strings.NewReplacer("~", home, "$hist", hist)
			if err := os.MkdirAll(sess, 0o700); err != nil {
				t.Fatal(err)
			}
			for name, content := range tt.files {
				p := filepath.Join(home, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(tilde.Replace(content)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm"}
			for _, kv := range tt.env {
				env = append(env, tilde.Replace(kv))
			}
			command := append([]string{path}, tt.command[1:]...)
			argv, addEnv, ok, err := Setup(command, sess, hist, env)
			if !ok || err != nil {
				t.Fatalf("Setup(%q): ok %v, %v", command, ok, err)
			}
			tm := startTerm(t, argv, append(env, addEnv...), tmp)
			tm.expect(markB)
			if out, want := tm.run(tt.line), tilde.Replace(tt.want); !bytes.Contains(out, []byte(want+"\r\n")) {
				t.Errorf("no %q in %q", want, out)
			}
			tm.exit()
		})
	}
}
