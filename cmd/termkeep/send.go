package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"termkeep/internal/keys"
)

func newSendCmd(g *globals) *cobra.Command {
	var (
		noEnter   bool
		keyNames  []string
		fromStdin bool
	)
	cmd := &cobra.Command{
		Use:   "send SESSION [TEXT...]",
		Short: "Type text or keys into a session",
		Long: `Type into a session, as if at its keyboard.

  termkeep send web make test          types "make test" and Enter
  termkeep send web --no-enter q       types "q"
  termkeep send web --key C-c          presses Ctrl-C (no Enter is added when --key is given)
  termkeep send web ls --key Tab       types "ls", then Tab
  termkeep send web --stdin < file     sends the bytes of standard input as they are

Key names (as tmux's send-keys): C-a..C-z, C-@, C-[, C-\, C-], C-^, C-_,
M-<key> (Esc first), Enter, Esc, Tab, BTab, Space, BSpace, Up, Down, Left,
Right, Home, End, PageUp (PPage), PageDown (NPage), Insert (IC), Delete (DC),
F1..F12.`,
		Args: minArgs(1, "a SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, text := args[0], args[1:]
			var data []byte
			if fromStdin {
				if len(text) > 0 || len(keyNames) > 0 {
					return usageErr("--stdin sends standard input only; drop TEXT and --key")
				}
			} else {
				if len(text) > 0 {
					data = append(data, strings.Join(text, " ")...)
				}
				for _, k := range keyNames {
					b, err := keys.Bytes(k)
					if err != nil {
						return usageErr("%v", err)
					}
					data = append(data, b...)
				}
				if len(keyNames) == 0 && !noEnter {
					data = append(data, '\r')
				}
				if len(data) == 0 {
					return usageErr("nothing to send: give TEXT, --key or --stdin")
				}
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			if !fromStdin {
				return c.Input(cmd.Context(), ref, data)
			}
			buf := make([]byte, 1<<20)
			for {
				n, err := os.Stdin.Read(buf)
				if n > 0 {
					if err := c.Input(cmd.Context(), ref, buf[:n]); err != nil {
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
		},
	}
	f := cmd.Flags()
	f.BoolVar(&noEnter, "no-enter", false, "do not press Enter after TEXT")
	f.StringArrayVar(&keyNames, "key", nil, "press a named key (repeatable), e.g. C-c, Enter, Up")
	f.BoolVar(&fromStdin, "stdin", false, "send standard input's bytes as they are, with no Enter")
	return cmd
}
