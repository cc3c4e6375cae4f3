package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A scale viewer counts every line once, wherever frame boundaries cut the
// stream, and finds the holes and repeats in the numbering.
func TestScaleViewerLines(t *testing.T) {
	var stream []byte
	stream = append(stream, "\r\n"...) // an echo, not a line of the bench's
	for n := range 50 {
		if n == 20 || n == 21 {
			continue // two lines lost
		}
		stream = append(stream, []byte("L 7 "+strconv.Itoa(n)+" "+strconv.Itoa(int(time.Now().UnixMicro()))+"\r\n")...)
	}
	stream = append(stream, "L 7 10 1\r\nL 3 49 1\r\nE 7 50\r\n"...) // a repeat, another session's line, the end
	for chunk := 1; chunk <= 64; chunk *= 2 {
		v := &scaleViewer{idx: 7}
		for i := 0; i < len(stream); i += chunk {
			v.lines(stream[i:min(i+chunk, len(stream))], time.Now())
		}
		if v.seq != 50 || v.got != 48 || v.disorder != 2 || !v.ended || v.wrote != 50 || len(v.delays) != 48 {
			t.Fatalf("chunk %d: seq %d got %d disorder %d ended %v wrote %d delays %d; want 50 48 2 true 50 48",
				chunk, v.seq, v.got, v.disorder, v.ended, v.wrote, len(v.delays))
		}
	}
}

// The final screen of a workload file is its last rows-1 lines, then the
// empty line the cursor is on; the top line's number is what the reattach
// looks for.
func TestFinalScreen(t *testing.T) {
	m := newMarkers()
	path := filepath.Join(t.TempDir(), "w")
	if _, err := writeWorkload(path, 1<<20, m); err != nil {
		t.Fatal(err)
	}
	top, text, err := finalScreen(path, m)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(rows) != termRows {
		t.Fatalf("%d rows, want %d", len(rows), termRows)
	}
	if rows[termRows-2] != string(m.end) || rows[termRows-1] != "" {
		t.Fatalf("last rows %q %q: want the end marker, then the cursor's empty line", rows[termRows-2], rows[termRows-1])
	}
	if !strings.HasPrefix(rows[0], string(top)+" ") {
		t.Fatalf("top row %q does not begin with %q", rows[0], top)
	}
	b, _ := os.ReadFile(path)
	if bytes.Count(b, top) != 1 {
		t.Fatalf("%q occurs %d times in the file, want once", top, bytes.Count(b, top))
	}
}

func TestWriteLines(t *testing.T) {
	m := newMarkers()
	path := filepath.Join(t.TempDir(), "l")
	n, err := writeLines(path, 1000, m)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if int64(len(b)) != n || bytes.Count(b, []byte("\n")) != 1000 || !bytes.HasSuffix(b, append(m.end, '\n')) {
		t.Fatalf("%d bytes (said %d), %d lines; want 1000 lines ending with the end marker", len(b), n, bytes.Count(b, []byte("\n")))
	}
}

func TestContainsLine(t *testing.T) {
	text := "a\nsession x 3 done\nb\n"
	if !containsLine(text, "session x 3 done") || containsLine(text, "session x 3") || containsLine(text, "session x 3 done\nb") {
		t.Fatal("containsLine must match whole lines only")
	}
}
