// Package shellinit turns on shell integration for the interactive shells
// termkeep knows: bash, zsh and fish. With it, the shell reports its
// working directory (OSC 7, "ESC ] 7 ; file://HOST/PATH ESC \", the path
// percent-encoded but for unreserved characters and '/') at every prompt,
// marks prompts and commands (OSC 133 A prompt start, B prompt end, C
// output start, D;STATUS command finished, each ended by BEL), and keeps
// the session's own history file, so that a session restored after a
// reboot has its earlier commands in `history` and on the up-arrow.
//
// The scripts are embedded in the binary and written by Setup to the
// session directory's shell/ folder. They run the user's own startup files
// first and never edit them; they append to the user's hooks rather than
// replace them, keep working under `set -u`, print nothing but escape
// sequences, and are safe to source twice.
//
//   - bash starts with --rcfile shell/bashrc, which reads the system rc file
//     and ~/.bashrc (for -l/--login, which ignores --rcfile, termkeep drops
//     the flag and the script reads /etc/profile and the first of
//     ~/.bash_profile, ~/.bash_login, ~/.profile instead: the shell then
//     is not a login shell in bash's own sense, so `logout` refuses). It
//     adds a hook first in PROMPT_COMMAND (status, 133;D, `history -a`)
//     and one last (OSC 7, marks in PS1), and 133;C in PS0.
//   - zsh starts with ZDOTDIR=shell/zsh, whose .zshenv, .zprofile, .zshrc
//     and .zlogin each source the user's file with the user's ZDOTDIR in
//     place; the last one restores ZDOTDIR and adds precmd and preexec
//     hooks. A ZDOTDIR set in /etc/zsh/zshenv bypasses the wrapper: the
//     shell then runs without integration.
//   - fish starts with --init-command sourcing shell/init.fish, after its
//     own configuration, and uses the fish_prompt, fish_preexec and
//     fish_postexec events; fish 4 and later emit OSC 133 themselves, so
//     the script adds only OSC 7 and history there.
//
// History goes to the file the caller names, set as HISTFILE after the
// user's files have run (so they cannot redirect it). bash appends after
// each command (`history -a`); zsh appends each line as it is entered
// (INC_APPEND_HISTORY unless SHARE_HISTORY or INC_APPEND_HISTORY_TIME is
// set) and gets at least 10000 lines. fish cannot read history from a
// file of our choosing (before fish 4 it cannot add entries at all), so a
// fish session uses a history name of its own, termkeep_<hash of the
// history path>, kept by fish in its data directory
// (~/.local/share/fish/termkeep_<hash>_history); each command line is
// also appended to the session's history file (one line each, escaped as
// fish escapes them: \\ and \n), and when fish's file for the name is
// missing it is rebuilt from the session's file at start.
package shellinit

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"termkeep/internal/atomicfile"
)

//go:embed scripts
var scripts embed.FS

// Environment variables the scripts read, then unset so that programs
// started in the shell do not inherit them.
const (
	envHistfile    = "TERMKEEP_HISTFILE"     // the session's history file
	envBashLogin   = "TERMKEEP_BASH_LOGIN"   // "1": read bash's login files
	envZdotdir     = "TERMKEEP_ZDOTDIR"      // the user's ZDOTDIR, "" for $HOME
	envFishHistory = "TERMKEEP_FISH_HISTORY" // fish_history name for the session
)

// Kind names the shell a command runs, "" when it is none we integrate
// with: it looks at the base name of command[0] only. A shell given
// anything but the flags that leave it an interactive shell reading its
// startup files (-l, --login, -i; --interactive for zsh and fish) runs a
// script or a command string, and is not integrated.
func Kind(command []string) string {
	if len(command) == 0 {
		return ""
	}
	kind := filepath.Base(command[0])
	switch kind {
	case "bash", "zsh", "fish":
	default:
		return ""
	}
	for _, arg := range command[1:] {
		switch arg {
		case "-l", "--login", "-i", "-il", "-li":
		case "--interactive":
			if kind == "bash" {
				return ""
			}
		default:
			return ""
		}
	}
	return kind
}

// Setup prepares integration for command in the session directory dir,
// with the history file history: it writes the scripts under dir/shell/
// (directories 0700, files 0600, each replaced whole, so a shell still
// reading an old one is not disturbed) and creates history, 0600, if it
// is missing. It returns the argv to run and the KEY=VALUE entries to
// append to the session's environment env; they must come after env's own
// entries, which they override (ZDOTDIR for zsh). env is read, for
// ZDOTDIR, and not modified. ok is false, and argv and addEnv nil, when
// the command is not a shell we integrate with, or when err is not nil:
// the caller may then run command as it is.
//
// Setup is called again when a session is restored, with the same dir and
// history, and rewrites its files. It is safe for concurrent use with
// distinct dirs.
func Setup(command []string, dir, history string, env []string) (argv []string, addEnv []string, ok bool, err error) {
	kind := Kind(command)
	if kind == "" {
		return nil, nil, false, nil
	}
	argv, addEnv, err = setup(kind, command, dir, history, env)
	if err != nil {
		return nil, nil, false, fmt.Errorf("shellinit: set up %s integration in %s: %w", kind, dir, err)
	}
	return argv, addEnv, true, nil
}

func setup(kind string, command []string, dir, history string, env []string) (argv, addEnv []string, err error) {
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, nil, err
	}
	if history, err = filepath.Abs(history); err != nil {
		return nil, nil, err
	}
	shellDir := filepath.Join(dir, "shell")
	if err := mkdir(shellDir); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(history, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	f.Close()
	addEnv = []string{envHistfile + "=" + history}

	switch kind {
	case "bash":
		rc := filepath.Join(shellDir, "bashrc")
		if err := install("bashrc", rc); err != nil {
			return nil, nil, err
		}
		// bash wants its long options before the short ones, and ignores
		// --rcfile in a login shell: the script reads the login files.
		argv = []string{command[0], "--rcfile", rc}
		login := ""
		for _, arg := range command[1:] {
			switch arg {
			case "-l", "--login":
				login = "1"
			case "-il", "-li":
				login = "1"
				argv = append(argv, "-i")
			default:
				argv = append(argv, arg)
			}
		}
		// Always set, so that a stale value in env cannot stick.
		addEnv = append(addEnv, envBashLogin+"="+login)

	case "zsh":
		zdir := filepath.Join(shellDir, "zsh")
		if err := mkdir(zdir); err != nil {
			return nil, nil, err
		}
		for _, name := range []string{"zshenv", "zprofile", "zshrc", "zlogin"} {
			if err := install(name, filepath.Join(zdir, "."+name)); err != nil {
				return nil, nil, err
			}
		}
		if err := install("termkeep.zsh", filepath.Join(zdir, "termkeep.zsh")); err != nil {
			return nil, nil, err
		}
		// An environment saved from an earlier run may already point
		// ZDOTDIR at the wrapper; the user's own value is then the one
		// it saved.
		user := lookup(env, "ZDOTDIR")
		if user == zdir {
			user = lookup(env, envZdotdir)
		}
		argv = slices.Clone(command)
		addEnv = append(addEnv, "ZDOTDIR="+zdir, envZdotdir+"="+user)

	case "fish":
		script := filepath.Join(shellDir, "init.fish")
		if err := install("init.fish", script); err != nil {
			return nil, nil, err
		}
		argv = append(slices.Clone(command), "--init-command", "source "+fishQuote(script))
		addEnv = append(addEnv, envFishHistory+"="+fishHistoryName(history))
	}
	return argv, addEnv, nil
}

// fishHistoryName is the name fish keeps a session's history under.
func fishHistoryName(history string) string {
	sum := sha256.Sum256([]byte(history))
	return "termkeep_" + hex.EncodeToString(sum[:8])
}

// Forget deletes what integration kept outside the session directory for
// the session whose history file is history: fish's own copy of its
// history, under $XDG_DATA_HOME/fish (default ~/.local/share/fish), found
// from env. The session directory itself is the caller's to delete.
func Forget(history string, env []string) error {
	if abs, err := filepath.Abs(history); err == nil {
		history = abs
	}
	data := envLookup(env, "XDG_DATA_HOME")
	if data == "" {
		home := envLookup(env, "HOME")
		if home == "" {
			return nil
		}
		data = filepath.Join(home, ".local", "share")
	}
	err := os.Remove(filepath.Join(data, "fish", fishHistoryName(history)+"_history"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func envLookup(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// install writes the embedded script name to path.
func install(name, path string) error {
	data, err := scripts.ReadFile("scripts/" + name)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data, false)
}

// mkdir makes dir, mode 0700 even if it existed with another mode.
func mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// lookup returns the value of key in env, the last entry winning as it
// does for os/exec; "" when it is missing.
func lookup(env []string, key string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// fishQuote quotes s as one fish word.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
