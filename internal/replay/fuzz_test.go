package replay

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"

	"termkeep/internal/screen"
)

// The checkpoint reader takes any bytes without panicking, as a file and
// as the model inside a well-formed file (past the checksum), and what it
// accepts reads back to the same screen.
func FuzzDecodeCheckpoint(f *testing.F) {
	s := screen.New(20, 5, screen.Options{})
	s.Write([]byte("hello\r\n\x1b[1;31mworld\x1b]2;t\x07\x1b[?1049h\x1b[3;3Hx"))
	model, err := s.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	valid := EncodeCheckpoint(1234, model)
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(valid[:ckptHeader])
	f.Add([]byte{})
	flipped := bytes.Clone(valid)
	flipped[40] ^= 1
	f.Add(flipped)
	f.Add(model)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, file := range [][]byte{b, EncodeCheckpoint(7, b)} {
			scr, off, err := DecodeCheckpoint(file)
			if err != nil {
				continue
			}
			again, err := scr.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			scr2, off2, err := DecodeCheckpoint(EncodeCheckpoint(off, again))
			if err != nil || off2 != off || scr2.Text(-1) != scr.Text(-1) {
				t.Fatalf("a checkpoint read back differs: %v", err)
			}
		}
	})
}

// The marks scanner takes any bytes without panicking, finds the same
// marks however the bytes are cut, and labels are short, valid UTF-8.
// A checkpoint's offset read from its header alone is the one the whole
// file decodes to, whenever it decodes; any other bytes are refused or
// give some offset, never a panic.
func FuzzCheckpointOffset(f *testing.F) {
	s := screen.New(20, 5, screen.Options{})
	s.Write([]byte("hello\r\nworld"))
	model, err := s.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	valid := EncodeCheckpoint(1<<40+3, model)
	f.Add(valid)
	f.Add(valid[:ckptHeader])
	f.Add(valid[:ckptHeader-1])
	f.Add(valid[:8])
	f.Add([]byte{})
	f.Add(model)
	f.Fuzz(func(t *testing.T, b []byte) {
		off, herr := headerOffset(b)
		if herr != nil && !errors.Is(herr, ErrCheckpoint) {
			t.Fatalf("header error %v does not wrap ErrCheckpoint", herr)
		}
		if _, doff, err := DecodeCheckpoint(b); err == nil && (herr != nil || off != doff) {
			t.Fatalf("the file decodes at %d; its header says %d, %v", doff, off, herr)
		}
	})
}

func FuzzMarks(f *testing.F) {
	f.Add([]byte(markStream), 10)
	f.Add([]byte("\x1b]133;D;-1\x07\x1b]133;B\x07\x08\x08x\x1b]133;C"), 3)
	f.Add([]byte("\x1b]133;C\x1b]133;D;99999999999999999999\x07"), 0)
	f.Fuzz(func(t *testing.T, p []byte, cut int) {
		cut = min(max(cut, 0), len(p))
		whole, split := scanMarks(p), scanMarks(p[:cut], p[cut:])
		if kinds(whole) != kinds(split) {
			t.Fatalf("cut at %d: %s\nwhole: %s", cut, kinds(split), kinds(whole))
		}
		for _, m := range whole {
			if !utf8.ValidString(m.Label) || utf8.RuneCountInString(m.Label) > maxLabel || m.Offset >= uint64(len(p)) {
				t.Fatalf("marker %+v", m)
			}
		}
	})
}
