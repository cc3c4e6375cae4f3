package vtscan

import (
	"bytes"
	"fmt"
	"testing"
)

// scan returns the text bytes of p and the events it holds, as strings.
func scan(p []byte) (text string, events []string) {
	var s Scanner
	var t []byte
	for _, b := range p {
		switch s.Step(b) {
		case Text:
			t = append(t, b)
		case CSI:
			events = append(events, fmt.Sprintf("csi %c %d,%d", s.Final, s.Param(0, 0), s.Param(1, 0)))
		case Esc:
			events = append(events, "esc "+string(s.Final))
		case OSC:
			events = append(events, "osc "+string(s.Payload()))
		}
	}
	return string(t), events
}

func TestScan(t *testing.T) {
	for _, c := range []struct {
		in     string
		text   string
		events []string
	}{
		{"plain\r\n", "plain\r\n", nil},
		{"a\x1b[1;2mb", "ab", []string{"csi m 1,2"}},
		{"a\x1b[mb", "ab", []string{"csi m 0,0"}},
		{"\x1b]133;A\x07$ ", "$ ", []string{"osc 133;A"}},
		{"\x1b]133;D;1\x1b\\x", "x", []string{"osc 133;D;1"}},
		// An ESC ends an OSC as xterm.js takes it, and starts a sequence.
		{"\x1b]0;title\x1b[2Jz", "z", []string{"osc 0;title", "csi J 2,0"}},
		// CAN aborts: no OSC, and the rest is text.
		{"\x1b]133;C\x18after", "after", nil},
		// A control inside a CSI is executed.
		{"\x1b[1\r;5H", "\r", []string{"csi H 1,5"}},
		{"\x1b(Bx\x1b7", "x", []string{"esc B", "esc 7"}},
		// DCS, APC: strings without a payload kept, ended by ST or BEL.
		{"\x1bPq#0\x1b\\y\x1b_apc\x07z", "yz", nil},
		{"é\x1b[31m", "é", []string{"csi m 31,0"}},
	} {
		text, events := scan([]byte(c.in))
		if text != c.text || len(events) != len(c.events) {
			t.Errorf("%q: text %q events %q; want %q %q", c.in, text, events, c.text, c.events)
			continue
		}
		for i := range events {
			if events[i] != c.events[i] {
				t.Errorf("%q: event %d %q, want %q", c.in, i, events[i], c.events[i])
			}
		}
	}
}

func TestBounds(t *testing.T) {
	long := "\x1b]133;" + string(bytes.Repeat([]byte("x"), 1000)) + "\x07"
	var s Scanner
	for _, b := range []byte(long) {
		if s.Step(b) == OSC && len(s.Payload()) != MaxPayload {
			t.Fatalf("payload of %d bytes kept, want %d", len(s.Payload()), MaxPayload)
		}
	}
	if s.Param(0, 7) != 7 {
		t.Fatal("a parameter with no CSI")
	}
	k := s.Kinds()
	if !k.Ground() || k.params != nil || k.payload != nil {
		t.Fatal("Kinds kept more than the state")
	}
}

// FuzzScan: any stream scans without a panic, within the bounds; a byte
// outside every sequence that is not ESC, CAN or SUB is text.
func FuzzScan(f *testing.F) {
	f.Add([]byte("\x1b]133;C\x07ls\r\n\x1b[1;31mred\x1b(B\x1bP1$r\x1b\\"))
	f.Add([]byte("\x1b]8;;http://x\x1b\\link\x1b]8;;\x07"))
	f.Fuzz(func(t *testing.T, p []byte) {
		var s Scanner
		for _, b := range p {
			ground := s.Ground()
			k := s.Step(b)
			if len(s.Payload()) > MaxPayload || len(s.params) > maxParams {
				t.Fatalf("kept %d payload bytes, %d parameter bytes", len(s.Payload()), len(s.params))
			}
			if ground && b != 0x1b && k != Text {
				t.Fatalf("byte %#x at the ground state is %d, not text", b, k)
			}
			if k == CSI && (s.Param(0, 1) < 1 || s.Param(3, 1) < 1) {
				t.Fatal("a default parameter below 1")
			}
		}
	})
}
