// Package keys maps key names to the bytes a terminal sends for them (an
// xterm in its default modes: normal cursor keys, no modifyOtherKeys), for
// clients that type into a session by name rather than by byte.
package keys

import (
	"fmt"
	"strings"
)

// named are the keys with a name of their own, by lower-case name.
var named = map[string]string{
	"enter": "\r", "return": "\r", "tab": "\t", "btab": "\x1b[Z", "backtab": "\x1b[Z", "space": " ",
	"escape": "\x1b", "esc": "\x1b", "backspace": "\x7f", "bspace": "\x7f",
	"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"home": "\x1b[H", "end": "\x1b[F",
	"pageup": "\x1b[5~", "pgup": "\x1b[5~", "ppage": "\x1b[5~",
	"pagedown": "\x1b[6~", "pgdn": "\x1b[6~", "npage": "\x1b[6~",
	"insert": "\x1b[2~", "ic": "\x1b[2~", "delete": "\x1b[3~", "del": "\x1b[3~", "dc": "\x1b[3~",
	"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS",
	"f5": "\x1b[15~", "f6": "\x1b[17~", "f7": "\x1b[18~", "f8": "\x1b[19~",
	"f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
}

// Bytes returns what a terminal sends for the key called name. Names are
// case-insensitive; a control key is Ctrl-X, Ctrl+X, C-X or ^X; Alt-<key>
// (also Meta-, M-) sends Escape and then the key; a single character is
// itself.
func Bytes(name string) ([]byte, error) {
	if b, ok := named[strings.ToLower(name)]; ok {
		return []byte(b), nil
	}
	if rest, ok := cutPrefixFold(name, "Alt-", "Alt+", "Meta-", "Meta+", "M-"); ok {
		b, err := Bytes(rest)
		if err != nil {
			return nil, err
		}
		return append([]byte{0x1b}, b...), nil
	}
	if rest, ok := cutPrefixFold(name, "Ctrl-", "Ctrl+", "Control-", "C-", "^"); ok {
		if b, ok := ctrl(rest); ok {
			return []byte{b}, nil
		}
	}
	if r := []rune(name); len(r) == 1 {
		return []byte(name), nil
	}
	return nil, fmt.Errorf("unknown key %q (known: Enter, Tab, Escape, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, Delete, Ctrl-A … Ctrl-Z, Ctrl-\\, F1 … F12, Alt-<key>)", name)
}

func cutPrefixFold(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
			return s[len(p):], true
		}
	}
	return "", false
}

// ctrl maps the key after Ctrl- to its control byte.
func ctrl(k string) (byte, bool) {
	if strings.EqualFold(k, "space") {
		return 0, true
	}
	if len(k) != 1 {
		return 0, false
	}
	switch c := k[0]; {
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
