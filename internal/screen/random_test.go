package screen

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// randomStream makes an escape-heavy stream: text of every width, controls,
// CSI sequences with random parameters, ESC sequences, OSC strings,
// characters split across writes, and resizes. (Streams like these, run
// through xterm.js as well, found most of the corners the model matches.)
func randomStream(seed int64, n int) (data []byte, chunks []int, resizes [][3]int, cols, rows int) {
	r := rand.New(rand.NewSource(seed))
	cols, rows = 2+r.Intn(30), 1+r.Intn(10)
	texts := []string{"a", "hello ", "中", "文字", "e\u0301", "\u0301", "❤\ufe0f", "😀", "\u200b", "x\u0308\u0301",
		"ab", "\t", "\r", "\n", "\b", "\r\n", " ", "\x7f", "ÿ", "\xe4\xb8", "\xad", "\xff", "\u0085", "\u0084",
		"\u0088", "\x0e", "\x0f", "q"}
	finals := "@ABCDEFGHIJKLMPSTXZ`abdefghlmnrsu"
	params := []int{0, 1, 2, 3, 4, 5, 6, 7, 9, 12, 25, 31, 42, 47, 1049, 1047, 45, 20, 1000}
	var b strings.Builder
	cur := 0
	for b.Len() < n {
		switch k := r.Intn(20); {
		case k < 8:
			b.WriteString(texts[r.Intn(len(texts))])
		case k < 14:
			b.WriteString("\x1b[")
			if r.Intn(4) == 0 {
				b.WriteByte("?>!"[r.Intn(3)])
			}
			for i := range r.Intn(4) {
				if i > 0 {
					b.WriteByte(';')
				}
				if r.Intn(5) > 0 {
					if r.Intn(20) == 0 {
						fmt.Fprint(&b, r.Intn(100))
					} else {
						fmt.Fprint(&b, params[r.Intn(len(params))])
					}
				}
				if r.Intn(8) == 0 {
					fmt.Fprintf(&b, ":%d", r.Intn(6))
				}
			}
			if r.Intn(10) == 0 {
				b.WriteByte(" !'\"$"[r.Intn(5)])
			}
			b.WriteByte(finals[r.Intn(len(finals))])
		case k < 16:
			b.WriteString([]string{"\x1b7", "\x1b8", "\x1bD", "\x1bE", "\x1bH", "\x1bM", "\x1b(0", "\x1b(B",
				"\x1b)0", "\x1bn", "\x1b#8", "\x1bc", "\x1b=", "\x1b%G"}[r.Intn(14)])
		case k < 17:
			fmt.Fprintf(&b, "\x1b]%d;%s\x07", []int{0, 1, 2, 8, 7}[r.Intn(5)], []string{"t", "id=1;u", ";", "", "file:///x"}[r.Intn(5)])
		case k < 18:
			fmt.Fprintf(&b, "\x1b[%d;%dH", r.Intn(rows+2), r.Intn(cols+2))
		case k < 19:
			fmt.Fprintf(&b, "\x1b[%dm", []int{0, 1, 4, 7, 31, 41, 38, 48}[r.Intn(8)])
		default:
			if b.Len() > cur && r.Intn(2) == 0 {
				chunks = append(chunks, b.Len()-cur)
				cur = b.Len()
			} else if r.Intn(3) == 0 {
				resizes = append(resizes, [3]int{b.Len(), 2 + r.Intn(30), 1 + r.Intn(10)})
			}
		}
	}
	data = []byte(b.String())
	if len(data) > cur {
		chunks = append(chunks, len(data)-cur)
	}
	return
}

// runStream feeds a random stream: its chunks, with each resize after the
// bytes before its offset.
func runStream(data []byte, chunks []int, resizes [][3]int, cols, rows int, opts Options) *Screen {
	s := New(cols, rows, opts)
	off, ri := 0, 0
	for _, n := range chunks {
		end := off + n
		for ri < len(resizes) && resizes[ri][0] <= end {
			if resizes[ri][0] > off {
				s.Write(data[off:resizes[ri][0]])
				off = resizes[ri][0]
			}
			s.Resize(resizes[ri][1], resizes[ri][2])
			ri++
		}
		s.Write(data[off:end])
		off = end
	}
	for ; ri < len(resizes); ri++ {
		s.Resize(resizes[ri][1], resizes[ri][2])
	}
	return s
}

// TestRandomStreams runs random streams through the model and checks the
// invariants, the snapshot and the checkpoint round trips.
func TestRandomStreams(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 50
	}
	for seed := int64(0); seed < int64(n); seed++ {
		data, chunks, resizes, cols, rows := randomStream(seed, 600)
		opts := Options{ScrollbackLines: 50}
		s := runStream(data, chunks, resizes, cols, rows, opts)
		checkInvariants(t, s)
		c := cloneScreen(t, s)
		want, got := s.Dump(-1), c.Dump(-1)
		if d := Diff(&want, &got, 5); d != nil || len(want.Scrollback) != len(got.Scrollback) {
			t.Fatalf("seed %d: restored checkpoint differs:\n  %s", seed, strings.Join(d, "\n  "))
		}
		r := New(s.cols, s.rows, opts)
		r.Write(s.Snapshot(-1))
		got = r.Dump(-1)
		maskInexact(s, &want, &got)
		if d := Diff(&want, &got, 5); d != nil {
			t.Fatalf("seed %d: snapshot differs:\n  %s", seed, strings.Join(d, "\n  "))
		}
		s.Write([]byte(probe))
		c.Write([]byte(probe))
		want, got = s.Dump(-1), c.Dump(-1)
		if d := Diff(&want, &got, 5); d != nil {
			t.Fatalf("seed %d: after more output the restored checkpoint differs:\n  %s", seed, strings.Join(d, "\n  "))
		}
	}
}
