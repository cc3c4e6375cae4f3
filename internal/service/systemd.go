package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"termkeep/internal/atomicfile"
)

// Runner runs a command to its end and returns what it printed, both
// streams. ExecRunner is the real one; tests play systemctl, loginctl and
// launchctl with their own.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExecRunner runs commands, each for at most a minute: a service manager
// that does not answer is reported, not waited for.
type ExecRunner struct{}

func (ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// Systemd installs the server as a systemd user unit. Each step it takes
// is a line on Out.
type Systemd struct {
	Run     Runner
	UnitDir string // $XDG_CONFIG_HOME/systemd/user
	User    string // for loginctl
	Out     io.Writer
	// SameFile says whether process pid runs the file at path; nil reads
	// /proc/PID/exe.
	SameFile func(pid int, path string) bool
	// Server, when set, is the termkeep server of the state directory:
	// install stops one that runs outside the service before it starts
	// the unit's, and waits up to Wait (0: 15 s) for the unit's to answer.
	Server Server
	Wait   time.Duration
}

// Server is the termkeep server of the state directory, as the CLI
// reaches it.
type Server interface {
	// Pid is the pid of the server that answers, 0 when none does.
	Pid(ctx context.Context) int
	// Stop asks it to stop, leaving its sessions running, and returns
	// once it no longer answers.
	Stop(ctx context.Context) error
}

// stopOutside stops a server that answers on the state directory and is
// not the unit's (mainPID): one the CLI started before the service was
// installed holds the directory's lock, and the unit's would fail on it.
func stopOutside(ctx context.Context, srv Server, mainPID int, say func(string, ...any)) error {
	if srv == nil {
		return nil
	}
	pid := srv.Pid(ctx)
	if pid == 0 || pid == mainPID {
		return nil
	}
	if err := srv.Stop(ctx); err != nil {
		return fmt.Errorf("stop the termkeep server that runs outside the service (pid %d): %w", pid, err)
	}
	say("stopped the termkeep server that ran outside the service (pid %d); sessions keep running", pid)
	return nil
}

// awaitServer waits until the server of pid (any, for 0) answers.
func awaitServer(ctx context.Context, srv Server, pid int, wait time.Duration, logs string) error {
	if srv == nil {
		return nil
	}
	if wait <= 0 {
		wait = 15 * time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		if p := srv.Pid(ctx); p != 0 && (pid == 0 || p == pid) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the service's server (pid %d) does not answer after %s (see %s)", pid, wait, logs)
		}
		// A poll: the server is a process systemd starts, and nothing
		// here hears when it begins to answer.
		time.Sleep(50 * time.Millisecond)
	}
}

func (m *Systemd) unitPath() string { return filepath.Join(m.UnitDir, UnitName) }

func (m *Systemd) say(format string, args ...any) { fmt.Fprintf(m.Out, format+"\n", args...) }

func (m *Systemd) systemctl(ctx context.Context, args ...string) ([]byte, error) {
	return m.Run.Run(ctx, "systemctl", append([]string{"--user"}, args...)...)
}

// show asks the user manager about the unit; the error, when none
// answers, is its first line.
func (m *Systemd) show(ctx context.Context) (Show, error) {
	out, err := m.systemctl(ctx, "show", UnitName, "-p", ShowProps)
	if err != nil {
		return Show{}, errors.New(firstLine(out, err))
	}
	return ParseShow(out), nil
}

func (m *Systemd) linger(ctx context.Context) Linger {
	out, err := m.Run.Run(ctx, "loginctl", "show-user", m.User, "-p", "Linger", "--value")
	switch {
	case err != nil:
		return LingerUnknown
	case strings.TrimSpace(string(out)) == "yes":
		return LingerOn
	case strings.TrimSpace(string(out)) == "no":
		return LingerOff
	}
	return LingerUnknown
}

func (m *Systemd) sameFile(pid int, path string) bool {
	if m.SameFile != nil {
		return m.SameFile(pid, path)
	}
	return SameExe(pid, path)
}

// SameExe: the process's executable is the file at path now. A binary
// replaced since the process started (a new build, make install) is
// another file, even at the same path.
func SameExe(pid int, path string) bool {
	a, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// readOrNil is the file's content, nil when there is none.
func readOrNil(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if b == nil && err == nil {
		b = []byte{}
	}
	return b, err
}

// Install writes the unit and the environment file and brings the
// service up as Decide says: a first start, a restart of the server alone
// for a new build, or nothing. Without a user manager it writes the files
// and says what to run later; that is not an error. A linger that cannot
// be turned on is said, with the command to run, and is not an error
// either: the service still runs while the user is logged in.
func (m *Systemd) Install(ctx context.Context, s Spec) error {
	f := Facts{UnitWant: Unit(s), EnvWant: EnvFile(s.Env)}
	var err error
	if f.UnitOnDisk, err = readOrNil(m.unitPath()); err != nil {
		return fmt.Errorf("read the unit: %w", err)
	}
	if f.EnvOnDisk, err = readOrNil(s.EnvFile); err != nil {
		return fmt.Errorf("read the environment file: %w", err)
	}
	show, managerErr := m.show(ctx)
	f.Manager, f.Show = managerErr == nil, show
	if show.MainPID > 0 {
		f.SameBinary = m.sameFile(show.MainPID, s.Binary)
	}
	f.Linger = m.linger(ctx)
	plan := Decide(f)
	switch plan.Kind {
	case Fresh:
		m.say("installing the termkeep service for %s", s.Binary)
	case Unchanged:
		m.say("the termkeep service is installed and runs %s (pid %d): nothing to change", s.Binary, show.MainPID)
	}
	for _, step := range plan.Steps {
		if err := m.do(ctx, step, s, show); err != nil {
			return err
		}
	}
	if !f.Manager {
		m.say("no systemd user manager answered (%s): the unit is written, not started; in a login session with systemd, run:\n  systemctl --user daemon-reload && systemctl --user enable --now %s", managerErr, UnitName)
	}
	return nil
}

func (m *Systemd) do(ctx context.Context, step Step, s Spec, before Show) error {
	switch step {
	case WriteEnv:
		if err := os.MkdirAll(filepath.Dir(s.EnvFile), 0o700); err != nil {
			return fmt.Errorf("make the environment file's directory: %w", err)
		}
		if err := atomicfile.Write(s.EnvFile, EnvFile(s.Env), true); err != nil {
			return fmt.Errorf("write the environment file: %w", err)
		}
		names := make([]string, len(s.Env))
		for i, v := range s.Env {
			names[i] = v.Name
		}
		m.say("wrote %s (%s): the login environment the service gives its sessions", s.EnvFile, strings.Join(names, ", "))
	case WriteUnit:
		if err := os.MkdirAll(m.UnitDir, 0o755); err != nil {
			return fmt.Errorf("make the unit's directory: %w", err)
		}
		if err := atomicfile.Write(m.unitPath(), Unit(s), true); err != nil {
			return fmt.Errorf("write the unit: %w", err)
		}
		m.say("wrote %s", m.unitPath())
	case Reload:
		return m.step(ctx, "reloaded the user manager's units", "daemon-reload")
	case Enable:
		return m.step(ctx, "enabled "+UnitName+": it starts with the user manager", "enable", UnitName)
	case Start, Restart:
		if err := stopOutside(ctx, m.Server, before.MainPID, m.say); err != nil {
			return err
		}
		verb := map[Step]string{Start: "start", Restart: "restart"}[step]
		if err := m.step(ctx, "", verb, UnitName); err != nil {
			return err
		}
		now, _ := m.show(ctx)
		if err := awaitServer(ctx, m.Server, now.MainPID, m.Wait, "journalctl --user -u termkeep"); err != nil {
			return err
		}
		answers := ""
		if m.Server != nil {
			answers = "; it answers"
		}
		if step == Start {
			m.say("started the server (pid %d)%s", now.MainPID, answers)
		} else {
			m.say("restarted the server (pid %d, now pid %d)%s; sessions keep running", before.MainPID, now.MainPID, answers)
		}
	case EnableLinger:
		out, err := m.Run.Run(ctx, "loginctl", "enable-linger", m.User)
		if err != nil {
			m.say("could not turn linger on (%s): without it the service stops at your last logout, and its sessions with it; run:\n  sudo loginctl enable-linger %s", firstLine(out, err), m.User)
			return nil
		}
		m.say("linger on: the service starts at boot and keeps running after your last logout")
	}
	return nil
}

func (m *Systemd) step(ctx context.Context, done string, args ...string) error {
	out, err := m.systemctl(ctx, args...)
	if err != nil {
		return fmt.Errorf("systemctl --user %s: %s (see journalctl --user -u termkeep)", strings.Join(args, " "), firstLine(out, err))
	}
	if done != "" {
		m.say("%s", done)
	}
	return nil
}

// firstLine is what a failed command said, in one line.
func firstLine(out []byte, err error) string {
	if l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); l != "" {
		return l
	}
	return err.Error()
}

// Uninstall stops the server (not the sessions: KillMode=process),
// disables and removes the unit and removes the environment file. Linger
// is left as it is, with the command that turns it off.
func (m *Systemd) Uninstall(ctx context.Context, envFile string) error {
	unit, err := readOrNil(m.unitPath())
	if err != nil {
		return fmt.Errorf("read the unit: %w", err)
	}
	if unit == nil {
		m.say("the termkeep service is not installed (no %s)", m.unitPath())
		return nil
	}
	_, managerErr := m.show(ctx)
	if managerErr == nil {
		if err := m.step(ctx, "stopped the server and disabled "+UnitName+"; sessions keep running (the next termkeep command starts a server of its own)", "disable", "--now", UnitName); err != nil {
			return err
		}
	}
	if err := os.Remove(m.unitPath()); err != nil {
		return fmt.Errorf("remove the unit: %w", err)
	}
	m.say("removed %s", m.unitPath())
	if err := os.Remove(envFile); err == nil {
		m.say("removed %s", envFile)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the environment file: %w", err)
	}
	if managerErr == nil {
		if err := m.step(ctx, "", "daemon-reload"); err != nil {
			return err
		}
	} else {
		m.say("no systemd user manager answered (%s): if one runs the service, stop it with: systemctl --user disable --now %s", managerErr, UnitName)
	}
	if m.linger(ctx) == LingerOn {
		m.say("linger is left on: loginctl disable-linger %s turns it off", m.User)
	}
	return nil
}

// Status is what `termkeep service status` says.
type Status struct {
	UnitPath   string
	Installed  bool
	Manager    bool   // a user manager answered
	ManagerErr string // else what systemctl said
	Show       Show
	Binary     string // the binary the unit runs
	Stale      bool   // the running server's binary is not that file now
	EnvFile    string
	EnvVars    []string
	EnvErr     string
	Linger     Linger
	User       string
}

// Status reads the unit, the environment file, the user manager and
// logind. It never fails: what it cannot learn it says.
func (m *Systemd) Status(ctx context.Context, envFile string) Status {
	st := Status{UnitPath: m.unitPath(), EnvFile: envFile, User: m.User}
	unit, err := readOrNil(st.UnitPath)
	st.Installed = unit != nil && err == nil
	if st.Installed {
		st.Binary, st.EnvFile = unitSettings(unit, envFile)
	}
	show, managerErr := m.show(ctx)
	st.Manager, st.Show = managerErr == nil, show
	if managerErr != nil {
		st.ManagerErr = managerErr.Error()
	}
	if show.MainPID > 0 && st.Binary != "" {
		st.Stale = !m.sameFile(show.MainPID, st.Binary)
	}
	if b, err := os.ReadFile(st.EnvFile); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			st.EnvErr = err.Error()
		}
	} else if vars, err := ParseEnvFile(b); err != nil {
		st.EnvErr = err.Error()
	} else {
		st.EnvVars = []string{}
		for _, v := range vars {
			st.EnvVars = append(st.EnvVars, v.Name)
		}
	}
	st.Linger = m.linger(ctx)
	return st
}

// unitSettings reads the binary of ExecStart and the EnvironmentFile from
// a unit (def when it names none).
func unitSettings(unit []byte, def string) (binary, envFile string) {
	argv, envFile := unitExec(unit)
	if len(argv) > 0 {
		binary = argv[0]
	}
	if envFile == "" {
		envFile = def
	}
	return binary, envFile
}

// unitExec reads a unit's ExecStart, split into its words, and its
// EnvironmentFile ("" when it names none).
func unitExec(unit []byte) (argv []string, envFile string) {
	for _, line := range bytes.Split(unit, []byte("\n")) {
		k, v, ok := strings.Cut(strings.TrimSpace(string(line)), "=")
		if !ok {
			continue
		}
		switch k {
		case "ExecStart":
			if w, err := execSplit(v); err == nil {
				argv = w
			}
		case "EnvironmentFile":
			envFile = strings.ReplaceAll(strings.TrimPrefix(v, "-"), "%%", "%")
		}
	}
	return argv, envFile
}

// Format writes the status for a person, one line a subject.
func (s Status) Format(w io.Writer) {
	if !s.Installed {
		fmt.Fprintf(w, "unit:        %s: not installed: termkeep service install\n", s.UnitPath)
	} else {
		enabled := s.Show.UnitFileState
		if enabled == "" {
			enabled = "unknown"
		}
		fmt.Fprintf(w, "unit:        %s (installed, %s)\n", s.UnitPath, enabled)
	}
	switch {
	case !s.Manager:
		fmt.Fprintf(w, "server:      unknown: no systemd user manager answered (%s)\n", s.ManagerErr)
	case s.Show.Active():
		fmt.Fprintf(w, "server:      %s (%s), pid %d, since %s\n", s.Show.ActiveState, s.Show.SubState, s.Show.MainPID, s.Show.Since)
	case s.Installed:
		fmt.Fprintf(w, "server:      %s: systemctl --user start %s (journalctl --user -u termkeep says why it stopped)\n", orText(s.Show.ActiveState, "inactive"), UnitName)
	}
	if s.Binary != "" {
		fmt.Fprintf(w, "binary:      %s\n", s.Binary)
		if s.Stale {
			fmt.Fprintf(w, "             the server (pid %d) runs an older build: termkeep service install restarts it\n", s.Show.MainPID)
		}
	}
	switch {
	case s.EnvErr != "":
		fmt.Fprintf(w, "environment: %s: %s\n", s.EnvFile, s.EnvErr)
	case s.EnvVars != nil:
		fmt.Fprintf(w, "environment: %s (%s)\n", s.EnvFile, strings.Join(s.EnvVars, ", "))
	case s.Installed:
		fmt.Fprintf(w, "environment: %s: none (termkeep service install writes it)\n", s.EnvFile)
	}
	switch s.Linger {
	case LingerOn:
		fmt.Fprintln(w, "linger:      on: the service runs from boot and after your last logout")
	case LingerOff:
		fmt.Fprintf(w, "linger:      off: the service stops at your last logout, and its sessions with it; sudo loginctl enable-linger %s\n", s.User)
	default:
		fmt.Fprintln(w, "linger:      unknown: logind did not answer")
	}
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
