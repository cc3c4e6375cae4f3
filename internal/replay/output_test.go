package replay

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"termkeep/internal/outlog"
)

// Output's answers, each going on where the last stopped, carry the
// log's bytes exactly once and in order, each chunk with its time, the
// size first and at each change, the gaps where they were; each answer
// stops at a chunk's end once past its bound.
func TestOutput(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{})
	var want bytes.Buffer
	var resizedAt, gapAt uint64
	for i := range 300 {
		s := fmt.Sprintf("chunk %d\r\n", i)
		r.write(s)
		want.WriteString(s)
		switch i {
		case 100:
			resizedAt = r.l.End()
			r.resize(120, 40)
		case 200:
			gapAt = r.l.End()
			r.gap(50, "disk full")
		}
	}
	var got bytes.Buffer
	var sizes, gaps []string
	from, answers := uint64(0), 0
	for from < r.l.End() {
		pos, sent, steps := from, 0, 0
		next, err := Output(r.l, from, r.l.End(), 1000, func(c outlog.Chunk) error {
			if steps++; steps == 1 && c.Kind != outlog.ChunkSize {
				t.Fatalf("the answer from %d begins with %+v, not the size", from, c)
			}
			if c.Offset != pos || c.Time.IsZero() {
				t.Fatalf("a chunk %+v where the stream is at %d", c, pos)
			}
			switch c.Kind {
			case outlog.ChunkSize:
				sizes = append(sizes, fmt.Sprintf("%dx%d@%d", c.Cols, c.Rows, c.Offset))
			case outlog.ChunkData:
				if sent >= 1000 {
					t.Fatalf("a chunk after the answer's bound")
				}
				got.Write(c.Data)
				pos += uint64(len(c.Data))
				sent += len(c.Data)
			case outlog.ChunkGap:
				gaps = append(gaps, fmt.Sprintf("%d-%d", c.Offset, c.End))
				pos = c.End
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if next != pos || next <= from {
			t.Fatalf("the answer from %d ends at %d and says next %d", from, pos, next)
		}
		answers++
		from = next
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("the answers carry %d bytes, want the log's %d", got.Len(), want.Len())
	}
	if answers < want.Len()/1100 {
		t.Fatalf("%d answers for %d bytes of at most about 1000 each", answers, want.Len())
	}
	if want := []string{fmt.Sprintf("%d-%d", gapAt, gapAt+50)}; !slices.Equal(gaps, want) {
		t.Fatalf("gaps %v, want %v", gaps, want)
	}
	if !slices.Contains(sizes, fmt.Sprintf("120x40@%d", resizedAt)) || sizes[0] != "80x24@0" {
		t.Fatalf("sizes %v: want 80x24 first and 120x40 at %d", sizes, resizedAt)
	}
}

// An error from fn stops the walk and is returned.
func TestOutputError(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{})
	r.write("abc")
	boom := errors.New("boom")
	if _, err := Output(r.l, 0, 3, 100, func(outlog.Chunk) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

// An answer that stops where two size changes were logged at one offset
// leaves both to the next answer, which reports them in order: the
// player's terminal is shrunk and grown again, as the session's was.
func TestOutputEverySize(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{})
	r.write("\x1b[?1049h\x1b[H")
	for i := 1; i <= 24; i++ {
		r.write(fmt.Sprintf("row %02d\r\n", i))
	}
	at := r.l.End()
	r.resize(80, 12)
	r.resize(80, 24)
	r.write("after")
	for _, max := range []int{int(at), int(at) - 3, 1 << 20} {
		var sizes []string
		last := ""
		for from := uint64(0); from < r.l.End(); {
			next, err := Output(r.l, from, r.l.End(), max, func(c outlog.Chunk) error {
				// A repeated size is harmless; a missing one is not.
				if size := fmt.Sprintf("%dx%d", c.Cols, c.Rows); c.Kind == outlog.ChunkSize && size != last {
					sizes = append(sizes, fmt.Sprintf("%s@%d", size, c.Offset))
					last = size
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			from = next
		}
		want := []string{"80x24@0", fmt.Sprintf("80x12@%d", at), fmt.Sprintf("80x24@%d", at)}
		if !slices.Equal(sizes, want) {
			t.Errorf("answers of at most %d bytes report sizes %v, want %v", max, sizes, want)
		}
	}
}
