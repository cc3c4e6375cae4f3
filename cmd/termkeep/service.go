package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"termkeep/internal/client"
	"termkeep/internal/service"
	"termkeep/internal/statedir"
)

const serviceVerbs = "install, uninstall or status"

func newServiceCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service install|uninstall|status",
		Short: "Run the server as a service: a systemd user unit (Linux) or a launchd agent (macOS)",
		Long: `Run the server as a per-user service that starts at boot (Linux, with
linger) or at login (macOS) and starts again when it fails.

install writes the unit (~/.config/systemd/user/termkeep.service) and the
login environment its sessions get (~/.config/termkeep/service.env: PATH,
SSH_AUTH_SOCK, LANG, DISPLAY, WAYLAND_DISPLAY as set where you run it), starts
the server and turns linger on (loginctl enable-linger), so that the service
outlives your last logout. On macOS it writes ~/Library/LaunchAgents/termkeep.plist
with the same environment and loads it. Run it again after a new build: it
restarts the server alone, and every session keeps running.

A stop, restart or upgrade of the service never ends a session: the unit
stops the server only (KillMode=process; AbandonProcessGroup on macOS).
Without a systemd user manager (a container), install writes the files and
says what to run; that is not an error. status says what it finds and exits
0; uninstall leaves linger as it is.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("termkeep service needs a command: %s (see `termkeep service --help`)", serviceVerbs)
			}
			return usageErr("unknown service command %q: %s (see `termkeep service --help`)", args[0], serviceVerbs)
		},
	}
	install := &cobra.Command{
		Use:   "install [-- SERVE-FLAGS...]",
		Short: "Install the service, start it, and turn linger on; after a new build, restart the server alone",
		RunE: func(c *cobra.Command, args []string) error {
			if c.ArgsLenAtDash() != 0 && len(args) > 0 {
				return usageErr("termkeep service install takes serve's flags after --, as in `termkeep service install -- --listen off` (%s)", serviceVerbs)
			}
			svc, err := newServiceHost(g)
			if err != nil {
				return err
			}
			return svc.install(c.Context(), args)
		},
	}
	uninstall := serviceVerb(g, "uninstall", "Stop the server and remove the service; sessions keep running", (*serviceHost).uninstall)
	status := serviceVerb(g, "status", "Say whether the service is installed and running, which binary it runs, and whether linger is on", (*serviceHost).status)
	cmd.AddCommand(install, uninstall, status)
	return cmd
}

// serviceVerb is a service command that takes no arguments.
func serviceVerb(g *globals, use, short string, run func(*serviceHost, context.Context) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("%s takes no arguments (termkeep service %s)", c.CommandPath(), serviceVerbs)
			}
			svc, err := newServiceHost(g)
			if err != nil {
				return err
			}
			return run(svc, c.Context())
		},
	}
}

// serviceHost is this machine's service manager and the paths it uses.
type serviceHost struct {
	spec    service.Spec
	systemd *service.Systemd     // Linux
	launchd *service.LaunchAgent // macOS
}

// serviceStarter is how the installed service starts the server of state
// directory dir, nil when none is installed for it.
func serviceStarter(dir string) func(context.Context) error {
	switch runtime.GOOS {
	case "linux":
		cfg, err := os.UserConfigDir()
		if err != nil {
			return nil
		}
		return (&service.Systemd{Run: service.ExecRunner{}, UnitDir: filepath.Join(cfg, "systemd", "user")}).Starter(dir)
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		return (&service.LaunchAgent{Run: service.ExecRunner{}, AgentDir: filepath.Join(home, "Library", "LaunchAgents"), UID: os.Getuid()}).Starter(dir)
	}
	return nil
}

func newServiceHost(g *globals) (*serviceHost, error) {
	dir, err := statedir.Resolve(g.stateDir)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the termkeep binary: %w", err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return nil, fmt.Errorf("find the termkeep binary: %w", err)
	}
	h := &serviceHost{spec: service.Spec{Binary: exe, StateDir: dir.String()}}
	srv := stateServer{client.New(dir)}
	switch runtime.GOOS {
	case "linux":
		cfg, err := os.UserConfigDir()
		if err != nil {
			return nil, fmt.Errorf("find the configuration directory: %w", err)
		}
		u, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("find who you are, for loginctl: %w", err)
		}
		h.spec.EnvFile = filepath.Join(cfg, "termkeep", "service.env")
		h.systemd = &service.Systemd{Run: service.ExecRunner{}, UnitDir: filepath.Join(cfg, "systemd", "user"), User: u.Username, Out: os.Stdout, Server: srv,
			// A lean termkeep's server runs termkeep-server beside it (split.go).
			SameFile: func(pid int, path string) bool {
				return service.SameExe(pid, path) || service.SameExe(pid, serverBinary(path))
			}}
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("find the home directory: %w", err)
		}
		h.spec.LogFile = filepath.Join(home, "Library", "Logs", "termkeep", "server.log")
		h.launchd = &service.LaunchAgent{Run: service.ExecRunner{}, AgentDir: filepath.Join(home, "Library", "LaunchAgents"), UID: os.Getuid(), Out: os.Stdout, Server: srv}
	default:
		return nil, fmt.Errorf("termkeep service knows systemd (Linux) and launchd (macOS), not %s: run `%s serve --state-dir %s` from your system's own service manager, and stop only that process, never its children", runtime.GOOS, exe, dir)
	}
	return h, nil
}

func (h *serviceHost) install(ctx context.Context, args []string) error {
	h.spec.Args = args
	vars, skipped := service.ImportEnv(os.LookupEnv)
	h.spec.Env = vars
	if len(skipped) > 0 {
		fmt.Fprintf(os.Stderr, "termkeep: not carried to the service: %s (a value with a newline)\n", strings.Join(skipped, ", "))
	}
	if h.systemd != nil {
		return h.systemd.Install(ctx, h.spec)
	}
	return h.launchd.Install(ctx, h.spec)
}

func (h *serviceHost) uninstall(ctx context.Context) error {
	if h.systemd != nil {
		return h.systemd.Uninstall(ctx, h.spec.EnvFile)
	}
	return h.launchd.Uninstall(ctx)
}

func (h *serviceHost) status(ctx context.Context) error {
	if h.systemd != nil {
		h.systemd.Status(ctx, h.spec.EnvFile).Format(os.Stdout)
	} else {
		h.launchd.Status(ctx).Format(os.Stdout)
	}
	return nil
}

// stateServer is the server of the state directory, reached as every
// command reaches it (never started by it).
type stateServer struct{ c *client.Client }

func (s stateServer) Pid(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	h, err := s.c.Health(ctx)
	if err != nil {
		return 0
	}
	return h.Pid
}

// Stop is `termkeep shutdown`, then a wait for the process to be gone:
// until then it holds the state directory's lock.
func (s stateServer) Stop(ctx context.Context) error {
	pid := s.Pid(ctx)
	if err := s.c.Shutdown(ctx, false); err != nil && !errors.Is(err, client.ErrNoServer) {
		return err
	}
	deadline := time.Now().Add(15 * time.Second)
	for pid > 0 && unix.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			return fmt.Errorf("it is still running after 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
