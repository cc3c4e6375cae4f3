package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"termkeep/internal/agents"
	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/wire"
)

func newNewCmd(g *globals) *cobra.Command {
	var (
		name, cwd, workspace, size string
		sizePolicy, restoreCommand string
		agent                      string
		autoRestore, noShellInit   bool
		linger                     time.Duration
		env, keepEnvNames          []string
	)
	cmd := &cobra.Command{
		Use:     "new [HOST:] [flags] [-- CMD ARGS...] | --agent AGENT [flags] [-- AGENT ARGS...]",
		Aliases: []string{"new-session"},
		Short:   "Start a session and print its id",
		Long: `Start a session running CMD (default: $SHELL, else /bin/sh) and print its id.
The child gets this command's environment and working directory, plus the
--env values and TERM=xterm-256color. In bash, zsh and fish, termkeep's shell
integration reports the working directory and prompts and keeps the session's
own history file, which a restore reads back; --no-shell-integration turns it
off.

--agent AGENT (` + strings.Join(agents.Names(), ", ") + `) starts that AI coding agent
with ARGS, in the --workspace's directory when one is given (else the current
one), and records its resume command as the session's --restore-command: a
restore after a reboot continues the conversation. claude and gemini are
started on a conversation id of their own (--session-id) and resume exactly
it, so sessions in one directory never share one; codex's id is learned from
its open rollout file while it runs and resumed with codex resume ID; aider
reloads the directory's chat history. See docs/agents.md.

HOST: starts the session on another machine, through your ssh (as attach
HOST:SESSION does): termkeep new runs there with these flags, so the session
gets that machine's environment of a login over ssh and starts in your home
directory there (--cwd names a directory there, relative to it).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 && len(args) > 0 && strings.Contains(args[0], ":") {
				return newRemote(cmd, args)
			}
			if cmd.Flags().Changed("name") && strings.TrimSpace(name) == "" {
				return usageErr("--name is empty: give a name, or leave --name out for a session known by its id")
			}
			if name != "" {
				if p := api.SessionNameProblem(name); p != "" {
					return usageErr("session name %q is not allowed: %s", name, p)
				}
			}
			cols, rows, err := parseSize(size)
			if err != nil {
				return usageErr("--size: %v", err)
			}
			if linger < 0 {
				return usageErr("--linger %v: a duration of 0 or more (such as 30s; 0: not at all)", linger)
			}
			lingerArg := ""
			if cmd.Flags().Changed("linger") {
				lingerArg = linger.String()
			}
			for _, kv := range env {
				if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
					return usageErr("--env %q is not KEY=VALUE", kv)
				}
			}
			var launch agents.Launch
			conversation := ""
			if agent != "" {
				// Before anything is started: a missing agent is the whole answer.
				p, err := agents.Lookup(agent)
				if err != nil {
					return usageErr("--agent: %v", err)
				}
				if launch, err = p.Plan(args, nil); err != nil {
					return err
				}
				args = launch.Command
				if !cmd.Flags().Changed("restore-command") {
					restoreCommand, conversation = launch.Restore, launch.Conversation
				}
			}
			if agent == "" && len(args) == 1 && !strings.ContainsAny(args[0], "/ ") {
				// tmux's `new work` names a session; here it would run a program.
				if _, err := exec.LookPath(args[0]); err != nil {
					return usageErr("no program %q to run (to name a session, use `termkeep new --name %s`)", args[0], args[0])
				}
			}
			dir := cwd
			if dir == "" {
				if dir, err = os.Getwd(); err != nil {
					return fmt.Errorf("find the current directory: %w", err)
				}
			} else if !filepath.IsAbs(dir) {
				wd, err := os.Getwd()
				if err != nil {
					return fmt.Errorf("find the current directory: %w", err)
				}
				dir = filepath.Join(wd, dir)
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			if agent != "" && cwd == "" && workspace != "" {
				// An agent works in its workspace's directory.
				if wsDir, err := workspaceDir(cmd.Context(), c, workspace); err != nil {
					return err
				} else if wsDir != "" {
					dir = wsDir
				}
			}
			s, err := c.Create(cmd.Context(), api.CreateRequest{
				Name: name, Command: args, Cwd: dir, Workspace: workspace, Cols: cols, Rows: rows,
				Env: os.Environ(), SetEnv: env, KeepEnv: keepEnvNames, SizePolicy: sizePolicy,
				RestoreCommand: restoreCommand, AutoRestore: autoRestore, NoShellIntegration: noShellInit,
				Linger: lingerArg, Agent: agent, AgentConversation: conversation,
			})
			if err != nil {
				return err
			}
			fmt.Println(s.ID)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&name, "name", "s", "", "a name to use instead of the id (unique; -s as tmux's new -s)")
	f.StringVar(&cwd, "cwd", "", "working directory (default: the current one; relative to it)")
	f.StringVar(&workspace, "workspace", "", "workspace the session belongs to")
	f.StringVar(&size, "size", "80x24", "terminal size COLSxROWS")
	f.StringArrayVar(&env, "env", nil, "extra environment variable KEY=VALUE (repeatable)")
	f.StringArrayVar(&keepEnvNames, "keep-env", nil, "also record variable NAME in the session's saved environment (repeatable; secret-looking names never are)")
	f.StringVar(&restoreCommand, "restore-command", "", "shell command a restore runs instead of CMD (e.g. 'claude --continue')")
	f.BoolVar(&autoRestore, "auto-restore", false, "restore the session by itself when the server finds it interrupted (after a reboot)")
	f.BoolVar(&noShellInit, "no-shell-integration", false, "no working-directory reports, prompt marks or session history for bash, zsh and fish")
	f.StringVar(&agent, "agent", "", "start an AI coding agent ("+strings.Join(agents.Names(), ", ")+") that a restore resumes")
	f.DurationVar(&linger, "linger", 60*time.Second, "after CMD exits, how long to keep logging what processes it left behind print while they hold the terminal (0: not at all)")
	f.StringVar(&sizePolicy, "size-policy", "", "whose size the session takes when viewers differ: latest, smallest, largest or fixed (default: the server's)")
	return cmd
}

// newRemote runs `new HOST: [flags] [-- CMD...]` as termkeep new on
// HOST, over ssh, with the flags given here: the session gets the
// environment and home directory of a login there, not this machine's.
func newRemote(cmd *cobra.Command, args []string) error {
	t, isRemote, err := remoteTarget(args[0])
	if err != nil {
		return err
	}
	if !isRemote || t.Session != "" {
		return usageErr("%s: new takes HOST: alone (name the session with --name)", args[0])
	}
	remoteArgs := []string{"new"}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Changed || f.Name == "state-dir" || f.Name == "no-autostart" {
			return // this machine's
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				remoteArgs = append(remoteArgs, "--"+f.Name+"="+v)
			}
			return
		}
		remoteArgs = append(remoteArgs, "--"+f.Name+"="+f.Value.String())
	})
	remoteArgs = append(append(remoteArgs, "--"), args[1:]...)
	return remoteErr(dialerFor(t).Run(cmd.Context(), remoteArgs, os.Stdout, os.Stderr))
}

// workspaceDir returns the directory of workspace name, or "" when there is
// no such workspace yet (creating the session creates it).
func workspaceDir(ctx context.Context, c *client.Client, name string) (string, error) {
	list, err := c.Workspaces(ctx)
	if err != nil {
		return "", err
	}
	for _, w := range list {
		if w.Name == name {
			return w.Dir, nil
		}
	}
	return "", nil
}

// parseSize reads COLSxROWS.
func parseSize(s string) (int, int, error) {
	cs, rs, ok := strings.Cut(strings.ToLower(s), "x")
	cols, err1 := strconv.Atoi(cs)
	rows, err2 := strconv.Atoi(rs)
	if !ok || err1 != nil || err2 != nil || cols < 1 || rows < 1 || cols > wire.MaxDim || rows > wire.MaxDim {
		return 0, 0, fmt.Errorf("%q is not COLSxROWS (e.g. 120x40, each 1..%d)", s, wire.MaxDim)
	}
	return cols, rows, nil
}
