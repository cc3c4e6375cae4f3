package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
	"termkeep/internal/keys"
)

func newSendCmd(g *globals) *cobra.Command {
	var (
		noEnter   bool
		keyNames  []string
		fromStdin bool
		literal   bool
		noPaste   bool
		paste     bool
	)
	cmd := &cobra.Command{
		Use:   "send SESSION [TEXT...]",
		Short: "Type text or keys into a session",
		Long: `Type into a session, as if at its keyboard.

  termkeep send web make test          types "make test" and Enter
  termkeep send web --no-enter q       types "q"
  termkeep send web --key C-c          presses Ctrl-C (no Enter is added when --key is given)
  termkeep send web ls --key Tab       types "ls", then Tab
  termkeep send web -l 'q'             types "q" exactly: no key names, no Enter, no paste marks
  termkeep send web --stdin < file     sends the bytes of standard input as they are

Keys are sent the way the session's program asked for them: cursor keys,
Home and End in application mode for less, vim and curses programs (ESC O A
for Up). One line of TEXT is typed as keys, as given, as tmux's send-keys
does, so "termkeep send ed ':wq'" gives vim a command. TEXT of several
lines goes as a paste: without escape sequences or control characters
other than tab and newlines (so nothing in it ends the paste or runs as
keys), between bracketed-paste marks when the program turned those on (a
shell's line editor, an agent's input box), so a newline in it does not
run a half-typed line. --paste and --no-paste choose for any TEXT;
--no-paste and -l type it as keys, as given.

Key names (as tmux's send-keys): C-a..C-z, C-Space, C-@, C-[, C-\, C-], C-^,
C-_, M-<key> (Esc first), S-<key>, Enter, Esc, Tab, BTab (S-Tab), Space,
BSpace, Up, Down, Left, Right, Home, End, PageUp (PPage), PageDown (NPage),
Insert (IC), Delete (DC), F1..F12; C-, M- and S- combine (C-S-Up, M-F5).

"termkeep wait SESSION --output TEXT" after "send" may match the shell's
echo of what was typed; see "termkeep run" for a command's own output.`,
		Args: minArgs(1, "a SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, text := args[0], args[1:]
			if ref == "" {
				return usageErr("SESSION is empty: give a session's id or name")
			}
			if fromStdin {
				if len(text) > 0 || len(keyNames) > 0 || literal {
					return usageErr("--stdin sends standard input only; drop TEXT, --key and -l")
				}
				c, err := g.connect(cmd.Context())
				if err != nil {
					return err
				}
				return readStdinChunks(func(b []byte) error { return c.Input(cmd.Context(), ref, b) })
			}
			req := api.SendRequest{Text: strings.Join(text, " "), Keys: keyNames}
			var err error
			if req.NoPaste, err = sendNoPaste(req.Text, paste, noPaste); err != nil {
				return err
			}
			if literal {
				if len(keyNames) > 0 {
					return usageErr("-l types TEXT literally; drop --key")
				}
				if paste {
					return usageErr("-l types TEXT without paste marks; drop --paste")
				}
				req.NoPaste = true
			} else {
				req.Enter = len(keyNames) == 0 && !noEnter
			}
			for _, k := range keyNames {
				if _, err := keys.Bytes(k); err != nil {
					return usageErr("%v", err)
				}
			}
			if req.Text == "" && len(req.Keys) == 0 && !req.Enter {
				return usageErr("nothing to send: give TEXT, --key or --stdin")
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			_, err = c.Send(cmd.Context(), ref, req)
			return apiErr(err)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&noEnter, "no-enter", false, "do not press Enter after TEXT")
	f.StringArrayVar(&keyNames, "key", nil, "press a named key (repeatable), e.g. C-c, Enter, Up")
	f.BoolVar(&fromStdin, "stdin", false, "send standard input's bytes as they are, with no Enter")
	f.BoolVarP(&literal, "literal", "l", false, "type TEXT exactly as given: no key names, no Enter, no paste marks (as tmux's send-keys -l)")
	f.BoolVar(&noPaste, "no-paste", false, "type TEXT as keys, even TEXT of several lines")
	f.BoolVar(&paste, "paste", false, "send TEXT as a bracketed paste when the program takes those, even one line")
	return cmd
}

// sendNoPaste decides how send types TEXT: one line as keys (a paste is
// text to insert for vim, which always asks for pastes), several lines as
// a paste, unless --paste or --no-paste says. The API's default stays a
// paste: run_command relies on it.
func sendNoPaste(text string, paste, noPaste bool) (bool, error) {
	switch {
	case paste && noPaste:
		return false, usageErr("--paste and --no-paste contradict each other: give one")
	case paste:
		return false, nil
	case noPaste:
		return true, nil
	}
	return !strings.ContainsAny(text, "\r\n"), nil
}

// readStdinChunks hands standard input to fn as it comes.
func readStdinChunks(fn func([]byte) error) error {
	buf := make([]byte, 1<<20)
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			if err := fn(buf[:n]); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read standard input: %w", err)
		}
	}
}
