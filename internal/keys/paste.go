package keys

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"unicode/utf8"
)

// pasteJSON is the list of control characters a paste keeps, shared with
// the page (web/src/paste.ts), which reads the same file.
//
//go:embed paste.json
var pasteJSON []byte

// pasteAllowed holds the control characters a paste keeps.
var pasteAllowed = func() map[rune]bool {
	var t struct {
		Allowed []string `json:"allowed_controls"`
	}
	if err := json.Unmarshal(pasteJSON, &t); err != nil {
		panic("keys: paste.json: " + err.Error())
	}
	m := make(map[rune]bool)
	for _, s := range t.Allowed {
		r, n := utf8.DecodeRuneInString(s)
		if n != len(s) || !isControl(r) {
			panic("keys: paste.json: " + s + " is not one control character")
		}
		m[r] = true
	}
	return m
}()

// The bracketed-paste marks.
const pasteStart, pasteEnd = "\x1b[200~", "\x1b[201~"

// isControl reports whether r is a C0 control character, DEL or a C1
// control character.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) }

// SanitizePaste returns text as a paste may carry it: without the
// bracketed-paste marks (removed whole, again until none is left, so
// that removing one cannot make another) and without any control
// character paste.json does not allow. Its ESC gone, no escape sequence
// survives: what is left of one is plain text. A byte that is not UTF-8
// is kept, unless it is a lone C1 byte (0x80-0x9F), which an 8-bit
// terminal would read as a control. The result is a new slice.
func SanitizePaste(text []byte) []byte {
	for bytes.Contains(text, []byte(pasteEnd)) || bytes.Contains(text, []byte(pasteStart)) {
		text = bytes.ReplaceAll(text, []byte(pasteEnd), nil)
		text = bytes.ReplaceAll(text, []byte(pasteStart), nil)
	}
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			if b := text[i]; b < 0x80 || b > 0x9f {
				out = append(out, b)
			}
		case !isControl(r) || pasteAllowed[r]:
			out = append(out, text[i:i+n]...)
		}
		i += n
	}
	return out
}

// Paste returns text as a terminal pastes it: sanitized (SanitizePaste),
// so that nothing in it runs as keys, and between the bracketed-paste
// marks when the program asked for them (bracketed), so that it takes the
// text as a paste and not as typing (a newline does not run a half-typed
// command). Typing text raw is the caller's choice (send --no-paste).
func Paste(text []byte, bracketed bool) []byte {
	text = SanitizePaste(text)
	if !bracketed {
		return text
	}
	b := make([]byte, 0, len(text)+len(pasteStart)+len(pasteEnd))
	b = append(b, pasteStart...)
	b = append(b, text...)
	return append(b, pasteEnd...)
}
