package screen

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// printStream is output whose printable ASCII comes in runs of every
// length, cut by every kind of byte next to the run's bounds (0x1f, 0x7f,
// 0x80, UTF-8, ESC), through the modes that change how a run prints:
// auto-wrap off, insert, a line-drawing charset, a scroll region, a
// cursor at the margin; and CSI sequences with parameters of every form:
// empty, huge, sub-parameters, too many, after a private marker, with
// an intermediate, cut by a control or another sequence.
func printStream(r *rand.Rand, n int) []byte {
	pieces := []string{"\x1f", "\x7f", "\x80", "\xc2\xa0", "\xe4\xb8\xad", "\xff", "\x1b", "\x1b[", "\x1b[31m", "\x1b[m",
		"\r\n", "\n", "\r", "\t", "\b", "\x1b[?7l", "\x1b[?7h", "\x1b[4h", "\x1b[4l", "\x1b(0", "\x1b(B",
		"\x1b[2;4r", "\x1b[r", "\x1b[H", "\x1b[99C", "\x1b[5G", "e\u0301", "\u0301", "中", "\x1b[3b", "\x1b]2;t\x07",
		"\x1b[1;44m", "\x1b[K", "\x1b[2@"}
	var b []byte
	for len(b) < n {
		if r.Intn(4) == 0 {
			b = appendCSI(r, b)
			continue
		}
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

// appendCSI appends a random CSI sequence, or the start of one.
func appendCSI(r *rand.Rand, b []byte) []byte {
	b = append(b, "\x1b["...)
	if r.Intn(5) == 0 {
		b = append(b, "?>=<"[r.Intn(4)])
	}
	k := r.Intn(6)
	if r.Intn(20) == 0 {
		k = 40 // past maxParams
	}
	for i := range k {
		if i > 0 {
			b = append(b, ";;:"[r.Intn(3)])
		}
		switch r.Intn(6) {
		case 0: // empty
		case 1:
			b = append(b, "99999999999"[:1+r.Intn(11)]...)
		default:
			b = fmt.Append(b, []int{0, 1, 2, 4, 5, 7, 31, 38, 44, 48, 58, 97}[r.Intn(12)])
		}
	}
	switch r.Intn(12) {
	case 0:
		return append(b, "\r\x1b"[r.Intn(2)]) // cut by a control or a new sequence
	case 1:
		b = append(b, ' ')
	case 2:
		b = append(b, '?') // a marker after parameters: ignored to the final byte
	}
	return append(b, "mHJKrABCDG@PbhlmmmmX"[r.Intn(20)])
}

// TestPrintFastPath checks the parser's fast paths (printable ASCII,
// CSI parameters) against the paths of any character and any byte: the
// same streams, cut into the same writes, leave the same screens and
// histories.
func TestPrintFastPath(t *testing.T) {
	defer func() { slowPaths = false }()
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
			slowPaths = slow
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
		if fast.p.state != slow.p.state || fast.p.p != slow.p.p || fast.attr != slow.attr {
			t.Fatalf("seed %d: parser in state %d with %+v and %+v, want %d with %+v and %+v", seed,
				fast.p.state, fast.p.p, fast.attr, slow.p.state, slow.p.p, slow.attr)
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
		defer func() { slowPaths = false }()
		fast := fuzzRun(t, size, plan, data, false)
		slowPaths = true
		slow := fuzzRun(t, size, plan, data, false)
		want, got := slow.Dump(-1), fast.Dump(-1)
		if d := Diff(&want, &got, 5); d != nil || len(want.Scrollback) != len(got.Scrollback) {
			t.Fatalf("the fast path differs:\n  %s", strings.Join(d, "\n  "))
		}
	})
}
