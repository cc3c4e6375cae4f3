package screen

import (
	"fmt"
	"math/rand"
	"strings"
)

// RandomStream makes an escape-heavy stream for differential checks.
func RandomStream(seed int64, n int) (data []byte, chunks []int, resizes [][3]int, cols, rows int) {
	r := rand.New(rand.NewSource(seed))
	cols, rows = 2+r.Intn(30), 1+r.Intn(10)
	texts := []string{"a", "hello ", "中", "文字", "e\u0301", "\u0301", "❤\ufe0f", "😀", "\u200b", "x\u0308\u0301", "ab", "\t", "\r", "\n", "\b", "\r\n", " ", "\x7f", "ÿ", "\xe4\xb8", "\xad", "\xff", "\u0085", "\u0084", "\u0088", "\x0e", "\x0f", "q"}
	csis := "@ABCDEFGHIJKLMPSTXZ`abdefghlmnrsu"
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
			np := r.Intn(4)
			for i := 0; i < np; i++ {
				if i > 0 {
					b.WriteByte(';')
				}
				if r.Intn(5) > 0 {
					fmt.Fprint(&b, []int{0, 1, 2, 3, 4, 5, 6, 7, 9, 12, 25, 31, 42, 47, 1049, 1047, 45, 20, 1000, r.Intn(100)}[r.Intn(20)])
				}
				if r.Intn(8) == 0 {
					fmt.Fprintf(&b, ":%d", r.Intn(6))
				}
			}
			if r.Intn(10) == 0 {
				b.WriteByte(" !'\"$"[r.Intn(5)])
			}
			b.WriteByte(csis[r.Intn(len(csis))])
		case k < 16:
			b.WriteString([]string{"\x1b7", "\x1b8", "\x1bD", "\x1bE", "\x1bH", "\x1bM", "\x1b(0", "\x1b(B", "\x1b)0", "\x1bn", "\x1b#8", "\x1bc", "\x1b=", "\x1b%G"}[r.Intn(14)])
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

func MaskBoth(data []byte, chunks []int, resizes [][3]int, cols, rows int, a, b *Dump) {
	s := New(cols, rows, Options{})
	off, ri := 0, 0
	for _, n := range chunks {
		for ri < len(resizes) && resizes[ri][0] <= off {
			s.Resize(resizes[ri][1], resizes[ri][2])
			ri++
		}
		// split at resize offsets inside the chunk
		end := off + n
		for ri < len(resizes) && resizes[ri][0] < end {
			s.Write(data[off:resizes[ri][0]])
			off = resizes[ri][0]
			s.Resize(resizes[ri][1], resizes[ri][2])
			ri++
		}
		s.Write(data[off:end])
		off = end
	}
	for ; ri < len(resizes); ri++ {
		s.Resize(resizes[ri][1], resizes[ri][2])
	}
	maskInexact(s, a, b)
}

// RandomStream2: lots of wrapped text, some styles, many resizes.
func RandomStream2(seed int64, n int) (data []byte, chunks []int, resizes [][3]int, cols, rows int) {
	r := rand.New(rand.NewSource(seed))
	cols, rows = 2+r.Intn(40), 1+r.Intn(12)
	texts := []string{"word ", "hello world ", "中文", "e\u0301", "❤\ufe0f", "😀", "\r\n", "\r\n", "\r\n", "x", "\x1b[31m", "\x1b[0m", "\x1b[44m", "\x1b[K", "\x1b[A", "\x1b[3D", "\t", "ab", "\x1b[?1049h", "\x1b[?1049l", "\x1b[H", "\x1b[2J"}
	var b strings.Builder
	cur := 0
	for b.Len() < n {
		k := r.Intn(30)
		switch {
		case k < 27:
			t := texts[r.Intn(len(texts))]
			if strings.HasPrefix(t, "\x1b[?1049") && r.Intn(4) > 0 {
				continue
			}
			b.WriteString(strings.Repeat(t, 1+r.Intn(3)))
		case k < 28:
			if b.Len() > cur {
				chunks = append(chunks, b.Len()-cur)
				cur = b.Len()
			}
		default:
			resizes = append(resizes, [3]int{b.Len(), 2 + r.Intn(40), 1 + r.Intn(12)})
		}
	}
	data = []byte(b.String())
	if len(data) > cur {
		chunks = append(chunks, len(data)-cur)
	}
	_ = fmt.Sprint
	return
}
