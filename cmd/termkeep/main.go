// Command termkeep is a terminal session server that never loses your
// terminal: `termkeep serve` runs the server, and the other commands create,
// list, attach to, type into, read and end sessions through it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"termkeep/internal/client"
	"termkeep/internal/remote"
	"termkeep/internal/statedir"
	"termkeep/internal/wire"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitTimeout = 124
)

// exitErr carries a specific exit code; its message (if any) goes to stderr.
type exitErr struct {
	code int
	msg  string
}

func (e *exitErr) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &exitErr{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// globals are the flags every command shares.
type globals struct {
	stateDir    string
	noAutostart bool
}

func main() {
	// The hidden holder mode runs before any CLI parsing: the server starts it
	// and it must stay small.
	if len(os.Args) > 1 && os.Args[1] == holderArg {
		os.Exit(holderMain())
	}
	os.Exit(run(os.Args[1:]))
}

// holderArg is the hidden first argument that runs termkeep as a holder when
// no termkeep-holder binary sits beside it.
const holderArg = "__holder"

func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot(args)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if cmd, ok := strings.CutPrefix(err.Error(), "unknown command "); ok {
		// cobra's own, with its suggestions on further lines.
		first, rest, _ := strings.Cut(cmd, "\n")
		msg := "unknown command " + first
		if i := strings.Index(rest, "Did you mean this?"); i >= 0 {
			var names []string
			for _, l := range strings.Split(rest[i:], "\n")[1:] {
				if l = strings.TrimSpace(l); l != "" {
					names = append(names, l)
				}
			}
			if len(names) > 0 {
				msg += "; did you mean " + strings.Join(names, " or ") + "?"
			}
		}
		fmt.Fprintln(os.Stderr, "termkeep: "+msg+" (see `termkeep --help`)")
		return exitUsage
	}
	var ee *exitErr
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, "termkeep: "+ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "termkeep: "+err.Error())
	return exitError
}

// commands are termkeep's commands, each with every name it answers to
// (its own and its aliases; TestCommandsNames keeps them so).
var commands = []struct {
	names []string
	build func(*globals) *cobra.Command
}{
	{[]string{"serve"}, newServeCmd}, {[]string{"new", "new-session"}, newNewCmd},
	{[]string{"ls", "list", "list-sessions"}, newLsCmd}, {[]string{"attach", "a", "attach-session"}, newAttachCmd},
	{[]string{"send"}, newSendCmd}, {[]string{"capture"}, newCaptureCmd}, {[]string{"wait"}, newWaitCmd},
	{[]string{"run"}, newRunCmd}, {[]string{"kill", "kill-session"}, newKillCmd},
	{[]string{"resize", "resize-window"}, newResizeCmd}, {[]string{"rm"}, newRmCmd},
	{[]string{"shutdown"}, newShutdownCmd}, {[]string{"url"}, newURLCmd}, {[]string{"events"}, newEventsCmd},
	{[]string{"restore"}, newRestoreCmd}, {[]string{"workspace", "ws"}, newWorkspaceCmd},
	{[]string{"user"}, newUserCmd}, {[]string{"token"}, newTokenCmd}, {[]string{"doctor"}, newDoctorCmd},
	{[]string{"stats"}, newStatsCmd}, {[]string{"export"}, newExportCmd}, {[]string{"grep"}, newGrepCmd},
	{[]string{"mcp"}, newMCPCmd},             // mcp.go
	{[]string{"service"}, newServiceCmd},     // service.go
	{[]string{remote.RelayArg}, newRelayCmd}, // relay.go: hidden
}

// commandFor returns the index in commands of the command that args (the
// command line after the program's name) run, or -1 when it takes them
// all to know: a root flag other than --state-dir and --no-autostart
// before it (the root's help, --version), help, completion, or a name no
// command has (cobra suggests the nearest). Building only the one a
// command line runs saves attach 0.5 ms.
func commandFor(args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--state-dir":
			i++ // its value
			continue
		case strings.HasPrefix(a, "--state-dir="), a == "--no-autostart", strings.HasPrefix(a, "--no-autostart="):
			continue
		case strings.HasPrefix(a, "-"):
			return -1
		}
		for j, c := range commands {
			if slices.Contains(c.names, a) {
				return j
			}
		}
		return -1
	}
	return -1
}

// newRoot returns the root command with the command args run, or with
// all of them (commandFor).
func newRoot(args []string) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "termkeep",
		Short:         "A terminal session server that never loses your terminal",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.stateDir, "state-dir", "", "state directory (env "+statedir.EnvVar+"; default $XDG_STATE_HOME/termkeep)")
	root.PersistentFlags().BoolVar(&g.noAutostart, "no-autostart", false, "do not start a server when none is running")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see `%s --help`)", err, c.CommandPath())
	})
	if i := commandFor(args); i >= 0 {
		root.AddCommand(commands[i].build(g))
		return root
	}
	for _, c := range commands {
		root.AddCommand(c.build(g))
	}
	return root
}

// exactArgs is cobra.ExactArgs with a usage exit code. A command whose
// first argument is a SESSION (what names it) refuses an empty one.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s needs %s (see `%s --help`)", c.CommandPath(), what, c.CommandPath())
		}
		return emptySession(what, args)
	}
}

func minArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErr("%s needs %s (see `%s --help`)", c.CommandPath(), what, c.CommandPath())
		}
		return emptySession(what, args)
	}
}

// withTarget lets cmd take its SESSION as tmux's -t NAME too.
func withTarget(cmd *cobra.Command) *cobra.Command {
	var target string
	cmd.Flags().StringVarP(&target, "target", "t", "", "the SESSION, as tmux's -t (instead of the argument)")
	args, run := cmd.Args, cmd.RunE
	cmd.Args = func(c *cobra.Command, a []string) error {
		if !c.Flags().Changed("target") {
			return args(c, a)
		}
		if len(a) > 0 {
			return usageErr("give the SESSION once: as -t or as an argument")
		}
		return emptySession("SESSION", []string{target})
	}
	cmd.RunE = func(c *cobra.Command, a []string) error {
		if c.Flags().Changed("target") {
			a = []string{target}
		}
		return run(c, a)
	}
	return cmd
}

// emptySession refuses an empty SESSION argument, which would otherwise
// reach the server as a path with a piece missing.
func emptySession(what string, args []string) error {
	if !strings.Contains(what, "SESSION") || len(args) == 0 {
		return nil
	}
	check := args[:1]
	if strings.Contains(what, "at least one SESSION") {
		check = args // rm: every argument is one
	}
	for _, a := range check {
		if strings.TrimSpace(a) == "" {
			return usageErr("SESSION is empty: give a session's id or name (see `termkeep ls`)")
		}
	}
	return nil
}

// connect returns a client for the state directory, starting a server in the
// background unless --no-autostart.
func (g *globals) connect(ctx context.Context) (*client.Client, error) {
	dir, err := statedir.Resolve(g.stateDir)
	if err != nil {
		return nil, err
	}
	c := client.New(dir)
	if g.noAutostart {
		if _, err := c.Health(ctx); err != nil {
			if errors.Is(err, client.ErrNoServer) {
				return nil, fmt.Errorf("no termkeep server is running for %s (start one with `termkeep serve`)", dir)
			}
			return nil, err
		}
		return c, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the termkeep binary: %w", err)
	}
	c.ServiceStart = serviceStarter(dir.String())
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := c.EnsureServer(sctx, []string{exe, "serve", "--state-dir", dir.String()}); err != nil {
		return nil, err
	}
	return c, nil
}

// holderArgv returns how the server starts a holder: the small
// termkeep-holder binary beside this one when it is there, else this binary
// in holder mode.
func holderArgv() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the termkeep binary: %w", err)
	}
	small := filepath.Join(filepath.Dir(exe), "termkeep-holder")
	if st, err := os.Stat(small); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return []string{small}, nil
	}
	return []string{exe, holderArg}, nil
}

// apiErr turns client errors into what a user reads.
func apiErr(err error) error {
	if err == nil {
		return nil
	}
	var re *wire.RemoteError
	if errors.As(err, &re) {
		return errors.New(re.Message)
	}
	return err
}
