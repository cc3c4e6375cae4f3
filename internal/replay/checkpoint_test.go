package replay

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"termkeep/internal/screen"
)

// A checkpoint file reads back to the screen and offset written; a torn,
// damaged or foreign file is refused.
func TestCheckpointFile(t *testing.T) {
	s := screen.New(30, 4, screen.Options{})
	s.Write([]byte("one\r\ntwo\r\n\x1b[7mthree"))
	model, _ := s.MarshalBinary()
	path := filepath.Join(t.TempDir(), "screen.ckpt")
	if err := WriteCheckpoint(path, 99, model); err != nil {
		t.Fatal(err)
	}
	got, off, err := ReadCheckpoint(path)
	if err != nil || off != 99 || got.ANSI(-1) != s.ANSI(-1) {
		t.Fatalf("read back: %v, offset %d, %q", err, off, got.ANSI(-1))
	}
	b, _ := os.ReadFile(path)
	for name, bad := range map[string][]byte{
		"torn":    b[:len(b)-3],
		"flipped": append(slices.Clone(b[:30]), append([]byte{b[30] ^ 0x40}, b[31:]...)...),
		"foreign": append([]byte("TKSCRN02"), b[8:]...),
		"empty":   nil,
	} {
		if _, _, err := DecodeCheckpoint(bad); !errors.Is(err, ErrCheckpoint) {
			t.Errorf("%s: %v, want ErrCheckpoint", name, err)
		}
	}
}

// AppendCheckpoint makes the file EncodeCheckpoint makes of the screen's
// MarshalBinary, after whatever the buffer held.
func TestAppendCheckpoint(t *testing.T) {
	s := screen.New(40, 5, screen.Options{})
	s.Write([]byte(strings.Repeat("a line of \x1b[1mhistory\x1b[m\r\n", 500) + "\x1b]0;title\x07last"))
	model, _ := s.MarshalBinary()
	want := EncodeCheckpoint(1234, model)
	if got := AppendCheckpoint(nil, 1234, s); string(got) != string(want) {
		t.Fatalf("AppendCheckpoint: %d bytes, EncodeCheckpoint: %d, and they differ", len(got), len(want))
	}
	got := AppendCheckpoint([]byte("prefix"), 1234, s)
	if string(got[:6]) != "prefix" || string(got[6:]) != string(want) {
		t.Fatal("AppendCheckpoint after a prefix is not the prefix and the file")
	}
	if _, off, err := DecodeCheckpoint(got[6:]); err != nil || off != 1234 {
		t.Fatalf("decode: %v, offset %d", err, off)
	}
}

// SaveCheckpoint keeps at most 1,000 lines of history, and the newest
// MaxCheckpoints files none of which is below the oldest retained byte.
func TestSaveAndPrune(t *testing.T) {
	dir := t.TempDir()
	s := screen.New(20, 3, screen.Options{})
	s.Write([]byte(strings.Repeat("a line\r\n", 3000)))
	model, _ := s.MarshalBinary()
	for i := range MaxCheckpoints + 10 {
		if err := SaveCheckpoint(dir, uint64(i*100), model, 0); err != nil {
			t.Fatal(err)
		}
	}
	// Litter: a file being written, and something else.
	os.WriteFile(filepath.Join(dir, Dir, "."+CheckpointName(5)+".123"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, Dir, "notes.txt"), nil, 0o600)
	offs, err := Checkpoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(offs) != MaxCheckpoints || offs[0] != 1000 || offs[len(offs)-1] != uint64((MaxCheckpoints+9)*100) {
		t.Fatalf("after %d saves: %v", MaxCheckpoints+10, offs)
	}
	got, _, err := ReadCheckpoint(checkpointPath(dir, offs[0]))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got.Text(-1), "a line"); n != CheckpointScrollback+2 {
		t.Fatalf("a replay checkpoint holds %d lines, want %d of history and 2 on the screen", n, CheckpointScrollback)
	}
	if err := Prune(dir, 5000, MaxCheckpoints); err != nil {
		t.Fatal(err)
	}
	if offs, _ := Checkpoints(dir); offs[0] != 5000 || len(offs) != MaxCheckpoints+10-50 {
		t.Fatalf("after pruning below 5000: %v", offs)
	}
	if offs, _ := Checkpoints(filepath.Join(dir, "none")); offs != nil {
		t.Fatalf("a session with no replay directory lists %v", offs)
	}
}
