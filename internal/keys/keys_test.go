package keys

import (
	"bytes"
	"testing"
)

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string
	}{
		{"Enter", "\r"}, {"enter", "\r"}, {"Tab", "\t"}, {"Escape", "\x1b"}, {"Backspace", "\x7f"},
		{"Up", "\x1b[A"}, {"Down", "\x1b[B"}, {"Right", "\x1b[C"}, {"Left", "\x1b[D"},
		{"Home", "\x1b[H"}, {"End", "\x1b[F"}, {"PageUp", "\x1b[5~"}, {"PageDown", "\x1b[6~"},
		{"Delete", "\x1b[3~"}, {"F1", "\x1bOP"}, {"F12", "\x1b[24~"},
		{"Ctrl-A", "\x01"}, {"Ctrl-c", "\x03"}, {"ctrl-d", "\x04"}, {"Ctrl-Z", "\x1a"}, {"Ctrl-\\", "\x1c"},
		{"C-c", "\x03"}, {"^C", "\x03"}, {"Ctrl+C", "\x03"}, {"Ctrl-Space", "\x00"},
		{"Alt-x", "\x1bx"}, {"M-Enter", "\x1b\r"}, {"q", "q"}, {"é", "é"},
	} {
		got, err := Bytes(tc.name)
		if err != nil {
			t.Errorf("Bytes(%q): %v", tc.name, err)
			continue
		}
		if !bytes.Equal(got, []byte(tc.want)) {
			t.Errorf("Bytes(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{"", "Ctrl-", "Ctrl-ab", "F13", "Hyper-x", "Alt-"} {
		if _, err := Bytes(bad); err == nil {
			t.Errorf("Bytes(%q) succeeded, want an error", bad)
		}
	}
}
