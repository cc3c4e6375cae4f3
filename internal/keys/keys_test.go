package keys

import (
	"bytes"
	"strings"
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

// Keys as xterm sends them in each mode: cursor keys, Home and End follow
// DECCKM (less, vim and curses programs with keypad(TRUE) switch it on);
// modified keys take xterm's parameters whatever the mode.
func TestEncodeModes(t *testing.T) {
	app := Modes{AppCursor: true}
	for _, tc := range []struct {
		name string
		m    Modes
		want string
	}{
		{"Up", app, "\x1bOA"}, {"down", app, "\x1bOB"}, {"Right", app, "\x1bOC"}, {"Left", app, "\x1bOD"},
		{"Home", app, "\x1bOH"}, {"End", app, "\x1bOF"}, {"Home", Modes{}, "\x1b[H"}, {"End", Modes{}, "\x1b[F"},
		{"PageDown", app, "\x1b[6~"}, {"F1", app, "\x1bOP"}, {"F5", app, "\x1b[15~"},
		{"C-Up", app, "\x1b[1;5A"}, {"S-Up", Modes{}, "\x1b[1;2A"}, {"M-Left", Modes{}, "\x1b[1;3D"},
		{"C-S-Right", Modes{}, "\x1b[1;6C"}, {"C-M-Home", app, "\x1b[1;7H"},
		{"S-F1", Modes{}, "\x1b[1;2P"}, {"C-F5", Modes{}, "\x1b[15;5~"}, {"M-F12", Modes{}, "\x1b[24;3~"},
		{"S-Delete", Modes{}, "\x1b[3;2~"},
		{"S-Tab", Modes{}, "\x1b[Z"}, {"BTab", app, "\x1b[Z"}, {"shift-tab", Modes{}, "\x1b[Z"},
		{"C-Space", Modes{}, "\x00"}, {"C-M-x", Modes{}, "\x1b\x18"}, {"S-a", Modes{}, "A"},
		{"Enter", app, "\r"}, {"M-Enter", app, "\x1b\r"},
	} {
		got, err := Encode(tc.name, tc.m)
		if err != nil {
			t.Errorf("Encode(%q, %+v): %v", tc.name, tc.m, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("Encode(%q, %+v) = %q, want %q", tc.name, tc.m, got, tc.want)
		}
	}
	for _, bad := range []string{"C-Tab", "S-1", "S-Enter", "C-Enter", "M-", "S-", "Up-", "C-é"} {
		if b, err := Encode(bad, app); err == nil {
			t.Errorf("Encode(%q) = %q, want an error", bad, b)
		}
	}
}

func TestPaste(t *testing.T) {
	if got := string(Paste([]byte("a\nb"), false)); got != "a\nb" {
		t.Fatalf("unbracketed paste %q", got)
	}
	if got := string(Paste([]byte("a\nb"), true)); got != "\x1b[200~a\nb\x1b[201~" {
		t.Fatalf("bracketed paste %q", got)
	}
	// A hostile text cannot end the paste early and run the rest as keys,
	// even when removing one end mark makes another.
	for _, evil := range []string{"x\x1b[201~rm -rf ~\r", "\x1b[20\x1b[201~1~\r"} {
		got := string(Paste([]byte(evil), true))
		inner := strings.TrimSuffix(strings.TrimPrefix(got, "\x1b[200~"), "\x1b[201~")
		if strings.Contains(inner, "\x1b[201~") {
			t.Fatalf("Paste(%q) = %q: the end mark is inside", evil, got)
		}
	}
}

func FuzzEncode(f *testing.F) {
	for _, s := range []string{"C-S-Up", "M-F5", "S-Tab", "^C", "é", "C-", "Ctrl+Alt+Delete"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, name string, appCursor bool) {
		b, err := Encode(name, Modes{AppCursor: appCursor})
		if err == nil && len(b) == 0 {
			t.Fatalf("Encode(%q) sent nothing without an error", name)
		}
	})
}
