package main

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"termkeep/internal/attach"
	"termkeep/internal/keys"
	"termkeep/internal/predict"
	"termkeep/internal/remote"
	"termkeep/internal/wire"
)

func newAttachCmd(g *globals) *cobra.Command {
	var (
		detachKey  string
		scrollback int
		readOnly   bool
		altScreen  bool
		detach     bool
		ignoreSize bool
		predictArg string
	)
	cmd := &cobra.Command{
		Use:     "attach SESSION | HOST:SESSION",
		Aliases: []string{"a", "attach-session"},
		Short:   "Attach this terminal to a session",
		Long: `Attach this terminal to a session: its screen as it is now (with up to
--scrollback lines of history above it), then live output; what you type goes
to it, and it follows this terminal's size.
Detach with Ctrl-\ (--detach-key; "none" to disable): the session keeps running.
A dropped connection is reopened by itself and continues where it left off.
When the session ends, attach says so and exits with the session's status.

The session draws on this terminal's normal screen, so its history goes into
the terminal's own scrollback; what was on the screen before scrolls up into
it. --alt-screen draws in the alternate screen instead, as tmux does, and
brings the earlier screen back on detach.

The session has one size. Attaching, and resizing this terminal, makes it
this terminal's (under the default size policy, latest; see termkeep
resize); when another viewer takes it, the session is drawn at its own size:
clipped when this terminal is smaller, the rest marked with dots when it is
larger. --ignore-size watches without ever changing the size. Either way, a detach, an exit or a
lost connection returns the terminal to its default modes (cursor keys,
mouse, bracketed paste, cursor, scroll region, colours), whatever the
session's program switched on. attach needs a terminal; scripts use
capture, send and wait.

HOST:SESSION attaches to a session on another machine through your own ssh
(TERMKEEP_SSH, default ssh: its config, agent and known hosts apply), which
runs termkeep there (on its PATH, else ~/.local/bin/termkeep;
TERMKEEP_REMOTE_BIN names another) and starts its server when none runs.
HOST is what ssh takes (user@host, an alias, [::1]); the last ':' ends it.
A dropped link is noticed within seconds and reopened by itself (ssh in
batch mode), continuing where it left off.

--predict shows what you type at the end of a line before its echo comes
back, underlined until the echo confirms it, as mosh does; a wrong guess
is erased. auto predicts when the measured round trip is above 30 ms
(the page's threshold and mosh's: below it, echo already feels
instant), so over ssh only; never at a password prompt (the pty's echo
off) nor in a full-screen program.`,
		Args: exactArgs(1, "a SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, ok := parseDetachKey(detachKey)
			if !ok {
				return usageErr("--detach-key %q is not a key like C-\\ or C-a (or none)", detachKey)
			}
			t, isRemote, err := remoteTarget(args[0])
			if err != nil {
				return err
			}
			if isRemote && t.Session == "" {
				return usageErr("%s names no session: attach HOST:SESSION (termkeep ls %s lists them)", args[0], args[0])
			}
			if altScreen {
				scrollback = 0 // the alternate screen has no scrollback
			}
			if detach && readOnly {
				return usageErr("-d detaches the other terminals to take the session over; a --read-only viewer takes nothing over")
			}
			pred, ok := predictSettings[predictArg]
			if !ok {
				return usageErr("--predict %q is not auto, always or never", predictArg)
			}
			cfg := attach.Config{
				Ref: args[0], In: os.Stdin, Out: os.Stdout, DetachKey: key,
				Scrollback: scrollback, Name: "attach " + attach.TTYName(os.Stdin),
				ReadOnly: readOnly, IgnoreSize: ignoreSize, AltScreen: altScreen, DetachOthers: detach,
				Lanes: os.Getenv("TERMKEEP_ECHO_LANE"), Predict: pred,
			}
			notTerminal := !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd()))
			if isRemote {
				if notTerminal {
					return usageErr("attach needs a terminal: its standard input and output are not both one")
				}
				return attachExit(attachRemote(cmd.Context(), t, cfg))
			}
			if notTerminal {
				c, err := g.connect(cmd.Context())
				if err != nil {
					return err
				}
				if _, err := c.Get(cmd.Context(), args[0]); err != nil {
					return apiErr(err)
				}
				return usageErr("attach needs a terminal: its standard input and output are not both one (from a script, use capture, send and wait)")
			}
			// No round trip to ask whether a server answers: the attach
			// itself finds out, and starts one if need be (follow.go).
			c, err := g.uncheckedClient()
			if err != nil {
				return err
			}
			if err := refuseNesting(cmd.Context(), c, args[0], os.Stdin); err != nil {
				return err
			}
			f := &follower{g: g, c: c, unchecked: true, ref: args[0], role: wire.RoleViewer}
			cfg.Open = f.dial
			return attachExit(attach.Run(cmd.Context(), cfg))
		},
	}
	cmd.Flags().StringVar(&detachKey, "detach-key", `C-\`, "key that detaches (e.g. C-\\, C-a, none)")
	cmd.Flags().IntVar(&scrollback, "scrollback", 1000, "lines of history to draw above the screen when attaching")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "watch only: never type into the session or resize it")
	cmd.Flags().BoolVarP(&detach, "detach-others", "d", false, "detach the session's other terminals (attach, not browsers), as tmux's attach -d")
	cmd.Flags().BoolVar(&ignoreSize, "ignore-size", false, "never change the session's size: draw it at its own (as tmux's attach -f ignore-size)")
	cmd.Flags().BoolVar(&altScreen, "alt-screen", false, "draw in the terminal's alternate screen and bring the earlier screen back on detach (no history in the terminal's scrollback)")
	cmd.Flags().StringVar(&predictArg, "predict", "auto", "show typing before its echo, underlined: auto (when the round trip is above 30 ms: over ssh), always, never")
	return withTarget(cmd)
}

var predictSettings = map[string]predict.Setting{"auto": predict.Auto, "always": predict.Always, "never": predict.Never}

// attachExit carries the session's end out as attach's status.
func attachExit(err error) error {
	if ee := (*attach.ExitError)(nil); errors.As(err, &ee) {
		return &exitErr{code: ee.Code}
	}
	return err
}

// attachRemote attaches to session t.Session on t.Host over ssh. The
// first connection is made before the terminal is taken, so that ssh can
// ask for a password or a host key's confirmation on it, and a failure
// is one line on a terminal left as it was. No lane reaches across ssh:
// a lane writes to the terminal's descriptor, handed over a local socket.
func attachRemote(ctx context.Context, t remote.Target, cfg attach.Config) error {
	d := dialerFor(t)
	first, err := d.Relay(ctx, remote.DialFirst)
	if err != nil {
		return remoteErr(err)
	}
	o := &remoteOpener{d: d, ref: t.Session, first: first}
	cfg.Open, cfg.Lanes, cfg.Keepalive = o.open, "off", remoteKeepalive
	if host, err := os.Hostname(); err == nil {
		cfg.Name = "attach " + host + ":" + attach.TTYName(cfg.In)
	}
	return attach.Run(ctx, cfg)
}

// parseDetachKey returns the byte of a control key, or -1 for none.
func parseDetachKey(s string) (int, bool) {
	if strings.EqualFold(s, "none") || s == "" {
		return -1, true
	}
	if b, err := keys.Bytes(s); err == nil && len(b) == 1 && (b[0] < 0x20 || b[0] == 0x7f) {
		return int(b[0]), true
	}
	return 0, false
}
