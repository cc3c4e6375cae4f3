package screen

import (
	"math/rand"
	"strings"
	"testing"
)

// printStream is output whose printable ASCII comes in runs of every
// length, cut by every kind of byte next to the run's bounds (0x1f, 0x7f,
// 0x80, UTF-8, ESC), through the modes that change how a run prints:
// auto-wrap off, insert, a line-drawing charset, a scroll region, a
// cursor at the margin.
func printStream(r *rand.Rand, n int) []byte {
	pieces := []string{"\x1f", "\x7f", "\x80", "\xc2\xa0", "\xe4\xb8\xad", "\xff", "\x1b", "\x1b[", "\x1b[31m", "\x1b[m",
		"\r\n", "\n", "\r", "\t", "\b", "\x1b[?7l", "\x1b[?7h", "\x1b[4h", "\x1b[4l", "\x1b(0", "\x1b(B",
		"\x1b[2;4r", "\x1b[r", "\x1b[H", "\x1b[99C", "\x1b[5G", "e\u0301", "\u0301", "中", "\x1b[3b", "\x1b]2;t\x07",
		"\x1b[1;44m", "\x1b[K", "\x1b[2@"}
	var b []byte
	for len(b) < n {
		if r.Intn(3) > 0 {
			k := r.Intn(40)
			if r.Intn(10) == 0 {
				k = r.Intn(300)
			}
			for range k {
				b = append(b, byte(0x20+r.Intn(0x5f)))
			}
			continue
		}
		b = append(b, pieces[r.Intn(len(pieces))]...)
	}
	return b
}

// TestPrintFastPath checks the parser's fast paths for printable ASCII
// against printing every character through putRune: the same streams,
// cut into the same writes, leave the same screens and histories.
func TestPrintFastPath(t *testing.T) {
	defer func() { slowPrint = false }()
	n := 300
	if testing.Short() {
		n = 50
	}
	for seed := int64(0); seed < int64(n); seed++ {
		r := rand.New(rand.NewSource(seed))
		cols, rows := 2+r.Intn(40), 1+r.Intn(8)
		data := printStream(r, 2000)
		var cuts []int
		for off := 0; off < len(data); {
			k := min(len(data)-off, 1+r.Intn(200))
			cuts = append(cuts, k)
			off += k
		}
		run := func(slow bool) *Screen {
			slowPrint = slow
			s := New(cols, rows, Options{ScrollbackLines: 100})
			off := 0
			for _, k := range cuts {
				s.Write(data[off : off+k])
				off += k
			}
			return s
		}
		fast, slow := run(false), run(true)
		want, got := slow.Dump(-1), fast.Dump(-1)
		if d := Diff(&want, &got, 5); d != nil || len(want.Scrollback) != len(got.Scrollback) {
			t.Fatalf("seed %d (%dx%d): the fast path differs:\n  %s", seed, cols, rows, strings.Join(d, "\n  "))
		}
		if fx, fy := fast.CursorPosition(); true {
			if sx, sy := slow.CursorPosition(); fx != sx || fy != sy || fast.cur.x != slow.cur.x {
				t.Fatalf("seed %d: cursor %d,%d (x %d), want %d,%d (x %d)", seed, fx, fy, fast.cur.x, sx, sy, slow.cur.x)
			}
		}
	}
}

// TestASCIIRun checks asciiRun on every byte at every place of a run.
func TestASCIIRun(t *testing.T) {
	for n := 0; n < 20; n++ {
		for c := 0; c < 256; c++ {
			p := []byte(strings.Repeat("x", n) + string([]byte{byte(c)}) + "yyyyyyyyyyyyyyyy")
			want := n
			if c >= 0x20 && c < 0x7f {
				want = len(p)
			}
			if got := asciiRun(p); got != want {
				t.Fatalf("%q: %d, want %d", p, got, want)
			}
		}
	}
}

// FuzzPrintFastPath is TestPrintFastPath on arbitrary output, writes and
// resizes.
func FuzzPrintFastPath(f *testing.F) {
	fuzzSeeds(f)
	for seed := int64(0); seed < 8; seed++ {
		r := rand.New(rand.NewSource(seed))
		f.Add(uint16(20+seed)|uint16(seed)<<7, []byte{40, 0xF0, 9, 3, 200, 7}, printStream(r, 1000))
	}
	f.Fuzz(func(t *testing.T, size uint16, plan []byte, data []byte) {
		if len(plan) > 64 || len(data) > 4096 {
			return
		}
		defer func() { slowPrint = false }()
		fast := fuzzRun(t, size, plan, data, false)
		slowPrint = true
		slow := fuzzRun(t, size, plan, data, false)
		want, got := slow.Dump(-1), fast.Dump(-1)
		if d := Diff(&want, &got, 5); d != nil || len(want.Scrollback) != len(got.Scrollback) {
			t.Fatalf("the fast path differs:\n  %s", strings.Join(d, "\n  "))
		}
	})
}
