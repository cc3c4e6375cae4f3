package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The end marker must be found wherever a read boundary cuts it.
func TestScannerAcrossBoundaries(t *testing.T) {
	pat := []byte("__END_1234__")
	stream := append(bytes.Repeat([]byte("x_"), 50), append(pat, "tail"...)...)
	for chunk := 1; chunk <= len(stream); chunk++ {
		s := newScanner(pat)
		found := -1
		for i := 0; i < len(stream); i += chunk {
			if s.feed(stream[i:min(i+chunk, len(stream))]) {
				found = i
				break
			}
		}
		if found < 0 {
			t.Fatalf("chunk %d: marker not found", chunk)
		}
		if end := bytes.Index(stream, pat) + len(pat); found >= end || found+chunk < end {
			t.Fatalf("chunk %d: found in the chunk at %d, marker ends at %d", chunk, found, end)
		}
	}
	s := newScanner(pat)
	if s.feed(bytes.Repeat([]byte("__END_123"), 100)) {
		t.Fatal("false match")
	}
}

func TestWorkloadSizeAndMarker(t *testing.T) {
	m := newMarkers()
	path := filepath.Join(t.TempDir(), "w")
	n, err := writeWorkload(path, 1<<20, m)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if int64(len(b)) != n || n != 1<<20 {
		t.Fatalf("size %d, file %d, want %d", n, len(b), 1<<20)
	}
	if bytes.Index(b, m.end) != len(b)-len(m.end)-1 || bytes.Contains(b, m.ready) {
		t.Fatal("the end marker must be the last line and appear once; the ready marker never")
	}
}
