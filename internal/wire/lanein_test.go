package wire

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlainTyping(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"a", true},
		{"hello world", true},
		{"\r", true},
		{"\t", true},
		{"\x7f", true},
		{"\b", true},
		{"é", true},
		{"日本", true},
		{"🙂", true},
		{strings.Repeat("x", MaxPlainTyping), true},
		{strings.Repeat("x", MaxPlainTyping+1), false}, // a paste
		{"", false},
		{"\x1b", false},         // Escape
		{"\x1b[A", false},       // an arrow
		{"\x1b[12;40R", false},  // a cursor position answer
		{"\x1b[?62;22c", false}, // device attributes
		{"\x1b]11;rgb:0/0/0\x07", false},
		{"\x1b[200~paste\x1b[201~", false},
		{"\x03", false}, // Ctrl-C
		{"\x1c", false}, // the default detach key
		{"ab\x1c", false},
		{"\n", false},
		{"\x00", false},
		{"\x9b12;40R", false},   // an 8-bit CSI
		{"\u009b12;40R", false}, // a C1 CSI as UTF-8
		{"\xc3", false},         // half a character
		{"a\xff", false},
	} {
		if got := PlainTyping([]byte(tc.in)); got != tc.want {
			t.Errorf("PlainTyping(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestLaneReadFrame(t *testing.T) {
	var b bytes.Buffer
	if err := NewWriter(&b).LaneRead(4242); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	f, err := ReadFrame(&b, &buf)
	if err != nil || f.Type != TypeLaneRead || Validate(f) != nil {
		t.Fatalf("frame %v, %v", f.Type, err)
	}
	if pid, err := ParseLaneRead(f.Payload); err != nil || pid != 4242 {
		t.Fatalf("pid %d, %v", pid, err)
	}
	for _, bad := range []Frame{
		{Type: TypeLaneRead, Payload: []byte{1, 2, 3}},
		{Type: TypeLaneIn, Payload: []byte{1}},
		{Type: TypeLaneInput},
		{Type: TypeLaneTyped, Payload: []byte{1}},
	} {
		if Validate(bad) == nil {
			t.Errorf("Validate(%s %x) passed", bad.Type, bad.Payload)
		}
	}
	if !HolderAccepts(9, TypeLaneRead) || HolderAccepts(8, TypeLaneRead) || HolderAccepts(Version, TypeLaneIn) {
		t.Error("lane-read is for holders of version 9, lane-in for none")
	}
}

// FuzzPlainTyping: what passes as plain typing holds nothing a terminal
// answers with, no control key but Enter, Tab and Backspace, and is text.
func FuzzPlainTyping(f *testing.F) {
	for _, s := range []string{"a", "\x1b[A", "é", "\u009b", "\r\t\x7f"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if !PlainTyping(p) {
			return
		}
		if len(p) > MaxPlainTyping || !utf8.Valid(p) {
			t.Fatalf("%q passed", p)
		}
		for _, r := range string(p) {
			if (r < 0x20 && r != '\r' && r != '\t' && r != '\b') || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("%q passed with %U", p, r)
			}
		}
	})
}
