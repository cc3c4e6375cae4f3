package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func newSendCmd(g *globals) *cobra.Command {
	var (
		noEnter   bool
		keys      []string
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
				if len(text) > 0 || len(keys) > 0 {
					return usageErr("--stdin sends standard input only; drop TEXT and --key")
				}
			} else {
				if len(text) > 0 {
					data = append(data, strings.Join(text, " ")...)
				}
				for _, k := range keys {
					b, err := keyBytes(k)
					if err != nil {
						return usageErr("%v", err)
					}
					data = append(data, b...)
				}
				if len(keys) == 0 && !noEnter {
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
	f.StringArrayVar(&keys, "key", nil, "press a named key (repeatable), e.g. C-c, Enter, Up")
	f.BoolVar(&fromStdin, "stdin", false, "send standard input's bytes as they are, with no Enter")
	return cmd
}

var namedKeys = map[string]string{
	"enter": "\r", "esc": "\x1b", "escape": "\x1b", "tab": "\t", "btab": "\x1b[Z", "space": " ",
	"bspace": "\x7f", "backspace": "\x7f",
	"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"home": "\x1b[H", "end": "\x1b[F",
	"pageup": "\x1b[5~", "ppage": "\x1b[5~", "pgup": "\x1b[5~",
	"pagedown": "\x1b[6~", "npage": "\x1b[6~", "pgdn": "\x1b[6~",
	"insert": "\x1b[2~", "ic": "\x1b[2~", "delete": "\x1b[3~", "dc": "\x1b[3~",
	"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS",
	"f5": "\x1b[15~", "f6": "\x1b[17~", "f7": "\x1b[18~", "f8": "\x1b[19~",
	"f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
}

// keyBytes turns a key name into the bytes a terminal sends for it.
func keyBytes(name string) ([]byte, error) {
	if b, ok := namedKeys[strings.ToLower(name)]; ok {
		return []byte(b), nil
	}
	if rest, ok := strings.CutPrefix(name, "M-"); ok && rest != "" {
		b, err := keyBytes(rest)
		if err != nil {
			return nil, err
		}
		return append([]byte{0x1b}, b...), nil
	}
	if rest, ok := cutCtrl(name); ok {
		if b, ok := ctrlByte(rest); ok {
			return []byte{b}, nil
		}
	}
	if len([]rune(name)) == 1 {
		return []byte(name), nil
	}
	return nil, fmt.Errorf("unknown key %q (e.g. C-c, Enter, Esc, Tab, Up, F1; see `termkeep send --help`)", name)
}

func cutCtrl(name string) (string, bool) {
	for _, p := range []string{"C-", "c-", "^"} {
		if rest, ok := strings.CutPrefix(name, p); ok && rest != "" {
			return rest, true
		}
	}
	return "", false
}

// ctrlByte maps the key after C- to its control byte.
func ctrlByte(k string) (byte, bool) {
	if strings.EqualFold(k, "space") {
		return 0, true
	}
	if len(k) != 1 {
		return 0, false
	}
	c := k[0]
	switch {
	case c >= 'a' && c <= 'z':
		return c - 'a' + 1, true
	case c >= 'A' && c <= 'Z':
		return c - 'A' + 1, true
	case c == '@' || c == '2':
		return 0, true
	case c == '[' || c == '3':
		return 0x1b, true
	case c == '\\' || c == '4':
		return 0x1c, true
	case c == ']' || c == '5':
		return 0x1d, true
	case c == '^' || c == '6':
		return 0x1e, true
	case c == '_' || c == '7' || c == '/':
		return 0x1f, true
	case c == '?' || c == '8':
		return 0x7f, true
	}
	return 0, false
}
