package wire

import (
	"bytes"
	"errors"
	"testing"
)

// The term-mode frame carries the log's end when the holder read the
// pty's flags, and the flags: ECHO and ICANON, each known or not.
func TestTermModeFrame(t *testing.T) {
	for _, m := range []TermMode{
		{At: 0, Echo: true, Canonical: true},
		{At: 12345, Echo: false, Canonical: true},
		{At: 1 << 40, Echo: true, Canonical: false},
		{At: 7, Echo: false, Canonical: false},
	} {
		var b bytes.Buffer
		if err := NewWriter(&b).TermMode(m); err != nil {
			t.Fatal(err)
		}
		var buf []byte
		f, err := ReadFrame(&b, &buf)
		if err != nil || f.Type != TypeTermMode {
			t.Fatalf("read: %v, %s", err, f.Type)
		}
		if err := Validate(f); err != nil {
			t.Fatalf("validate %+v: %v", m, err)
		}
		got, err := ParseTermMode(f.Payload)
		if err != nil || got != m {
			t.Errorf("ParseTermMode = %+v, %v; want %+v", got, err, m)
		}
	}
}

// A payload of another length, reserved bits set, or an offset out of
// range is malformed: the peer is not speaking this version.
func TestTermModeRejects(t *testing.T) {
	for name, p := range map[string][]byte{
		"empty":        {},
		"short":        {0, 0, 0, 0, 0, 0, 0, 0},
		"long":         {0, 0, 0, 0, 0, 0, 0, 0, 3, 0},
		"reserved bit": {0, 0, 0, 0, 0, 0, 0, 0, 0x04},
		"high bit":     {0, 0, 0, 0, 0, 0, 0, 0, 0x81},
		"offset":       {0x80, 0, 0, 0, 0, 0, 0, 0, 1},
	} {
		if _, err := ParseTermMode(p); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: ParseTermMode(%x) = %v, want malformed", name, p, err)
		}
		if err := Validate(Frame{Type: TypeTermMode, Payload: p}); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Validate = %v, want malformed", name, err)
		}
	}
}

// Holders send the frame; no holder accepts it.
func TestTermModeVersion(t *testing.T) {
	if Version < 7 {
		t.Fatalf("Version = %d: the term-mode frame came with 7", Version)
	}
	if HolderAccepts(Version, TypeTermMode) {
		t.Error("a holder accepts a term-mode frame")
	}
	if TypeTermMode.String() != "term-mode" {
		t.Errorf("name %q", TypeTermMode.String())
	}
}

// FuzzParseTermMode: any payload is either refused as malformed or
// encodes back to itself.
func FuzzParseTermMode(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 9, 3})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 9, 4})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		m, err := ParseTermMode(p)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not malformed", err)
			}
			return
		}
		var b bytes.Buffer
		NewWriter(&b).TermMode(m)
		if got := b.Bytes()[HeaderSize:]; !bytes.Equal(got, p) {
			t.Fatalf("%x re-encodes as %x", p, got)
		}
	})
}
