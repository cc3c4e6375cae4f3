// Package keys maps key names to the bytes an xterm sends for them, in the
// modes the program reading them has set (application cursor keys and
// keypad), for clients that type into a session by name rather than by
// byte: send, the MCP tools and the API.
package keys

import (
	"fmt"
	"strconv"
	"strings"
)

// Modes are the input modes a program sets that change what keys send.
type Modes struct {
	AppCursor bool // DECCKM: cursor keys, Home and End send ESC O x
	AppKeypad bool // DECKPAM: the keypad sends ESC O x (no named key here depends on it yet)
}

// special keys: a CSI or SS3 key, with the final byte (or the number of a
// "CSI n ~" key) that modifiers are added to.
type special struct {
	final  byte // 'A'…'D', 'H', 'F', 'P'…'S', or '~'
	num    int  // for '~' keys
	cursor bool // follows DECCKM when unmodified
	ss3    bool // ESC O x unmodified whatever the mode (F1–F4)
}

var specials = map[string]special{
	"up": {final: 'A', cursor: true}, "down": {final: 'B', cursor: true},
	"right": {final: 'C', cursor: true}, "left": {final: 'D', cursor: true},
	"home": {final: 'H', cursor: true}, "end": {final: 'F', cursor: true},
	"pageup": {final: '~', num: 5}, "pgup": {final: '~', num: 5}, "ppage": {final: '~', num: 5},
	"pagedown": {final: '~', num: 6}, "pgdn": {final: '~', num: 6}, "npage": {final: '~', num: 6},
	"insert": {final: '~', num: 2}, "ic": {final: '~', num: 2},
	"delete": {final: '~', num: 3}, "del": {final: '~', num: 3}, "dc": {final: '~', num: 3},
	"f1": {final: 'P', ss3: true}, "f2": {final: 'Q', ss3: true}, "f3": {final: 'R', ss3: true}, "f4": {final: 'S', ss3: true},
	"f5": {final: '~', num: 15}, "f6": {final: '~', num: 17}, "f7": {final: '~', num: 18}, "f8": {final: '~', num: 19},
	"f9": {final: '~', num: 20}, "f10": {final: '~', num: 21}, "f11": {final: '~', num: 23}, "f12": {final: '~', num: 24},
}

// plain keys: bytes of their own, the same in every mode.
var plain = map[string]string{
	"enter": "\r", "return": "\r", "tab": "\t", "space": " ",
	"escape": "\x1b", "esc": "\x1b", "backspace": "\x7f", "bspace": "\x7f",
	"btab": "\x1b[Z", "backtab": "\x1b[Z",
}

// Modifier bits, as xterm numbers them in "CSI 1 ; 1+bits x".
const (
	shift = 1
	alt   = 2
	ctrlM = 4
)

// Bytes returns what a terminal in its default modes sends for the key
// called name: Encode with no modes set.
func Bytes(name string) ([]byte, error) { return Encode(name, Modes{}) }

// Encode returns what a terminal in modes m sends for the key called name.
// Names are case-insensitive, as tmux's send-keys takes them: a special key
// (Up, Home, PageUp, Delete, F1…F12, Enter, Tab, BTab, Escape, Space,
// BSpace…), or a single character, after any of the modifiers C- (also
// Ctrl-, Ctrl+, Control-, ^), M- (Alt-, Meta-) and S- (Shift-). A modified
// special key is sent as xterm sends it (ESC [ 1 ; 5 A for C-Up); M- before
// anything else sends Escape first; S-Tab is BTab.
func Encode(name string, m Modes) ([]byte, error) {
	if name == "" {
		return nil, fmt.Errorf("empty key name (known: %s)", known)
	}
	if len([]rune(name)) == 1 {
		return []byte(name), nil
	}
	mods, key := 0, name
	for {
		if rest, ok := cutPrefixFold(key, "Ctrl-", "Ctrl+", "Control-", "C-", "^"); ok {
			mods |= ctrlM
			key = rest
		} else if rest, ok := cutPrefixFold(key, "Alt-", "Alt+", "Meta-", "Meta+", "M-"); ok {
			mods |= alt
			key = rest
		} else if rest, ok := cutPrefixFold(key, "Shift-", "Shift+", "S-"); ok {
			mods |= shift
			key = rest
		} else {
			break
		}
	}
	lower := strings.ToLower(key)
	if sp, ok := specials[lower]; ok {
		return sp.encode(mods, m), nil
	}
	var b []byte
	switch {
	case lower == "tab" && mods&shift != 0:
		b, mods = []byte("\x1b[Z"), mods&^shift
	case plain[lower] != "":
		b = []byte(plain[lower])
	case len([]rune(key)) == 1:
		b = []byte(key)
	default:
		return nil, fmt.Errorf("unknown key %q (known: %s)", name, known)
	}
	if mods&ctrlM != 0 {
		c, ok := ctrl(key)
		if !ok {
			return nil, fmt.Errorf("unknown key %q: no control key for %q (known: C-a … C-z, C-Space, C-@, C-[, C-\\, C-], C-^, C-_, C-?)", name, key)
		}
		b = []byte{c}
	}
	if mods&shift != 0 {
		if len(b) != 1 || b[0] < 'a' || b[0] > 'z' {
			return nil, fmt.Errorf("unknown key %q: no shifted form of %q (type the character itself)", name, key)
		}
		b[0] -= 'a' - 'A'
	}
	if mods&alt != 0 {
		b = append([]byte{0x1b}, b...)
	}
	return b, nil
}

const known = "Enter, Tab, BTab (S-Tab), Escape, Space, BSpace, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1 … F12, a character, with C-, M- and S- before them"

func (sp special) encode(mods int, m Modes) []byte {
	if mods == 0 {
		switch {
		case sp.final == '~':
			return []byte("\x1b[" + strconv.Itoa(sp.num) + "~")
		case sp.ss3 || (sp.cursor && m.AppCursor):
			return []byte{0x1b, 'O', sp.final}
		}
		return []byte{0x1b, '[', sp.final}
	}
	p := strconv.Itoa(1 + mods)
	if sp.final == '~' {
		return []byte("\x1b[" + strconv.Itoa(sp.num) + ";" + p + "~")
	}
	return []byte("\x1b[1;" + p + string(sp.final))
}

func cutPrefixFold(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
			return s[len(p):], true
		}
	}
	return "", false
}

// ctrl maps the key after C- to its control byte.
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
	case c == '@' || c == '2' || c == ' ':
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
