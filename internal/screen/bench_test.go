package screen

import (
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// plainText is typical shell output: lines of words, numbers and paths of
// varying length, a few with color, ended by CRLF as a pty sends them.
func plainText(n int) []byte {
	r := rand.New(rand.NewSource(1))
	words := strings.Fields("the quick brown fox jumps over lazy dog build test pass ok main.go " +
		"internal/screen/screen.go 1234 0.52s -rw-r--r-- root 4096 Nov 21 06:45 README.md error warning: " +
		"func return := go vet compile link")
	var b strings.Builder
	for b.Len() < n {
		width := r.Intn(90)
		line := 0
		for line < width {
			w := words[r.Intn(len(words))]
			b.WriteString(w)
			b.WriteByte(' ')
			line += len(w) + 1
		}
		if r.Intn(10) == 0 {
			b.WriteString("\x1b[32mok\x1b[0m")
		}
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}

// fullScreenApp is what editors, pagers and top send: whole-screen
// redraws with cursor addressing, colors, erasing, a scroll region and
// scrolling inside it, a status line.
func fullScreenApp(cols, rows, frames int) []byte {
	r := rand.New(rand.NewSource(2))
	var b strings.Builder
	b.WriteString("\x1b[?1049h\x1b[?1h\x1b=\x1b[?25l")
	text := string(plainText(cols * 4))
	text = strings.NewReplacer("\r\n", " ", "\x1b[32m", "", "\x1b[0m", "").Replace(text)
	off := 0
	chunk := func(n int) string {
		if off+n > len(text) {
			off = 0
		}
		s := text[off : off+n]
		off += n
		return s
	}
	for f := 0; f < frames; f++ {
		switch f % 4 {
		case 0: // full redraw, like vim after a jump
			b.WriteString("\x1b[H\x1b[2J")
			for y := 1; y < rows; y++ {
				fmt.Fprintf(&b, "\x1b[%dH\x1b[33m%4d \x1b[m", y, f*rows+y)
				n := r.Intn(cols - 5)
				s := chunk(n)
				for len(s) > 0 {
					k := min(len(s), 1+r.Intn(12))
					fmt.Fprintf(&b, "\x1b[38;5;%dm%s", r.Intn(256), s[:k])
					s = s[k:]
				}
				b.WriteString("\x1b[m\x1b[K")
			}
		case 1: // scroll a region and fill the new lines, like a pager
			fmt.Fprintf(&b, "\x1b[1;%dr\x1b[%dH", rows-1, rows-1)
			for i := 0; i < rows/3; i++ {
				fmt.Fprintf(&b, "\n\x1b[1;34m%s\x1b[m\x1b[K", chunk(r.Intn(cols)))
			}
			b.WriteString("\x1b[r")
		case 2: // a table of changing numbers, like top
			for y := 2; y < rows-1; y++ {
				fmt.Fprintf(&b, "\x1b[%d;1H\x1b[7m%6d\x1b[27m %5.1f %5.1f \x1b[1m%-*s\x1b[22m", y, r.Intn(99999),
					r.Float64()*100, r.Float64()*100, cols-20, chunk(cols/3))
			}
		case 3: // insert and delete lines, then the status line
			fmt.Fprintf(&b, "\x1b[%dH\x1b[3L\x1b[%dH\x1b[2M", 1+r.Intn(rows-4), 1+r.Intn(rows-4))
			fmt.Fprintf(&b, "\x1b[%dH\x1b[30;47m%-*s\x1b[m", rows, cols-1, " -- INSERT -- "+chunk(20))
		}
	}
	return []byte(b.String())
}

// buildLog is the bench program's throughput workload (bench/workload.go):
// compiler lines of about 100 bytes, ended by CRLF as the pty sends them.
func buildLog(n int) []byte {
	var b []byte
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, "[%d] ", i)
		switch i % 17 {
		case 0:
			b = fmt.Appendf(b, "warning: unused variable 'tmp%d' [-Wunused-variable]", i%977)
		case 5:
			b = fmt.Appendf(b, "LINK build/bin/tool%d", i%31)
		default:
			b = fmt.Appendf(b, "CC   src/pkg%d/file_%x.c -O2 -g -Wall -Wextra -fPIC -DNDEBUG -Iinclude -o build/obj/%x.o", i%113, i, i)
		}
		b = append(b, "\r\n"...)
	}
	return b
}

// lsColor is what `ls --color -l` prints: short runs of text between SGR
// sequences, a handful of styles over and over.
func lsColor(n int) []byte {
	r := rand.New(rand.NewSource(3))
	kinds := []string{"", "01;34", "01;32", "01;36", "00;31", "40;33;01"}
	var b []byte
	for i := 0; len(b) < n; i++ {
		k := kinds[r.Intn(len(kinds))]
		b = fmt.Appendf(b, "-rw-r--r-- 1 me staff %6d Nov %2d 06:%02d ", r.Intn(1<<20), 1+r.Intn(28), r.Intn(60))
		if k != "" {
			b = fmt.Appendf(b, "\x1b[%sm", k)
		}
		b = fmt.Appendf(b, "file_%d.%s", i, []string{"go", "c", "txt", "md"}[r.Intn(4)])
		if k != "" {
			b = append(b, "\x1b[0m"...)
		}
		b = append(b, "\r\n"...)
	}
	return b
}

// longLines are lines longer than the screen is wide: each wraps once or
// twice.
func longLines(n int) []byte {
	text := plainText(n)
	var b []byte
	for _, l := range strings.Split(string(text), "\r\n") {
		b = append(b, strings.Repeat(l+" ", 4)...)
		b = append(b, "\r\n"...)
	}
	return b
}

func benchWrite(b *testing.B, cols, rows int, data []byte) {
	withoutMarkChecks(b)
	s := New(cols, rows, Options{})
	s.Write(data) // warm: scrollback full, tables grown
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		s.Write(data)
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used, in nanoseconds. On a
// machine shared with other work the wall clock of a benchmark counts
// the time others take the CPU from it; its CPU time much less so, and it
// includes the garbage collector's, which a server pays as well.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkScreenPlainText80x24(b *testing.B)  { benchWrite(b, 80, 24, plainText(1<<20)) }
func BenchmarkScreenPlainText200x50(b *testing.B) { benchWrite(b, 200, 50, plainText(1<<20)) }
func BenchmarkScreenBuildLog200x50(b *testing.B)  { benchWrite(b, 200, 50, buildLog(1<<20)) }
func BenchmarkScreenLsColor200x50(b *testing.B)   { benchWrite(b, 200, 50, lsColor(1<<20)) }
func BenchmarkScreenLongLines200x50(b *testing.B) { benchWrite(b, 200, 50, longLines(1<<20)) }
func BenchmarkScreenFullScreenApp80x24(b *testing.B) {
	benchWrite(b, 80, 24, fullScreenApp(80, 24, 400))
}
func BenchmarkScreenFullScreenApp200x50(b *testing.B) {
	benchWrite(b, 200, 50, fullScreenApp(200, 50, 100))
}

func BenchmarkScreenSnapshot80x24(b *testing.B) {
	withoutMarkChecks(b)
	s := New(80, 24, Options{})
	s.Write(plainText(1 << 20))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = s.Snapshot(-1)
	}
}

func BenchmarkScreenCheckpoint80x24(b *testing.B) {
	withoutMarkChecks(b)
	s := New(80, 24, Options{})
	s.Write(plainText(1 << 20))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, _ := s.MarshalBinary()
		var c Screen
		_ = c.UnmarshalBinary(d)
	}
}

// heapOf reports the heap an object built by mk keeps alive.
func heapOf(mk func() any) (uint64, any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := mk()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc), v
}

// TestMemory checks the screen model's memory targets: an 80x24 session with a full
// scrollback of typical shell output under 2 MiB, an idle one under 64
// KiB.
func TestMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	idle, s1 := heapOf(func() any {
		s := New(80, 24, Options{})
		s.Write([]byte("\x1b]7;file:///home/me\x07\x1b]2;me@host: ~\x07me@host:~$ "))
		return s
	})
	full, s2 := heapOf(func() any {
		s := New(80, 24, Options{})
		s.Write(plainText(4 << 20))
		return s
	})
	// A quiet session's model compacts its history (session.model).
	quiet, s3 := heapOf(func() any {
		s := New(80, 24, Options{})
		s.Write(plainText(4 << 20))
		s.CompactScrollback()
		return s
	})
	sc := s2.(*Screen)
	t.Logf("idle 80x24 session: %d bytes", idle)
	t.Logf("80x24 with %d scrollback lines (%d packed bytes), still printing: %d bytes, %.1f bytes per scrollback line, %d bytes per screen cell",
		sc.sb.len(), sc.sb.bytes, full, float64(full)/float64(sc.sb.len()), 8)
	t.Logf("the same once quiet (history compressed): %d bytes, %.1f bytes per scrollback line", quiet, float64(quiet)/float64(sc.sb.len()))
	if quiet >= full {
		t.Errorf("compacting the history left %d bytes of %d", quiet, full)
	}
	if idle > 64<<10 {
		t.Errorf("idle session holds %d bytes, want under 64 KiB", idle)
	}
	if sc.sb.len() != defaultScrollbackLines {
		t.Errorf("scrollback has %d lines, want %d", sc.sb.len(), defaultScrollbackLines)
	}
	if full > 2<<20 {
		t.Errorf("full session holds %d bytes, want under 2 MiB", full)
	}
	runtime.KeepAlive(s1)
	runtime.KeepAlive(s2)
	runtime.KeepAlive(s3)
}

// TestScrollbackLimits checks both limits of the scrollback.
func TestScrollbackLimits(t *testing.T) {
	s := New(20, 4, Options{ScrollbackLines: 100})
	for i := 0; i < 500; i++ {
		fmt.Fprintf(s, "line %d\r\n", i)
	}
	d := s.Dump(-1)
	if len(d.Scrollback) != 100 || d.Scrollback[99].Text() != "line 496" {
		t.Errorf("%d lines, last %q", len(d.Scrollback), d.Scrollback[len(d.Scrollback)-1].Text())
	}
	s = New(20, 4, Options{ScrollbackBytes: 1000})
	for i := 0; i < 500; i++ {
		fmt.Fprintf(s, "line %d\r\n", i)
	}
	if s.sb.bytes > 1000 || s.sb.len() < 20 {
		t.Errorf("%d lines in %d bytes", s.sb.len(), s.sb.bytes)
	}
	if m := s.sb.memory(); m > 1000+2*maxChunkSize {
		t.Errorf("scrollback holds %d bytes", m)
	}
	s = New(20, 4, Options{ScrollbackLines: -1})
	s.Write([]byte("1\r\n2\r\n3\r\n4\r\n5\r\n6"))
	if d := s.Dump(-1); len(d.Scrollback) != 0 {
		t.Errorf("no-scrollback screen kept %d lines", len(d.Scrollback))
	}
}

// TestWriteAllocs checks that writing is allocation-free once the
// scrollback is full, but for at most a compressed copy of each history
// chunk it seals (one per 64 KiB of history; a chunk a flood drops raw
// costs none, and its buffer opens the next).
func TestWriteAllocs(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"plain", plainText(64 << 10)},
		{"app", fullScreenApp(80, 24, 40)},
	} {
		s := New(80, 24, Options{})
		for i := 0; i < 30; i++ { // until the scrollback is full
			s.Write(c.data)
		}
		opened := func() int { return int(s.sb.chunkBase) + len(s.sb.chunks) }
		before := opened()
		n := testing.AllocsPerRun(5, func() { s.Write(c.data) })
		sealed := float64(opened()-before) / 6 // AllocsPerRun runs it once more to warm up
		allowed := sealed + 0.2
		if raceEnabled {
			allowed += 2 * sealed // the pools' buffers, dropped by the race detector
		}
		if n > allowed {
			t.Errorf("%s: %.1f allocations per Write, %.1f chunks sealed", c.name, n, sealed)
		}
	}
}

// A snapshot as a fresh web UI viewer asks for it: the screen and 10,000
// lines of history (the default scrollback) at 200x50.
func BenchmarkScreenSnapshot200x50(b *testing.B) {
	withoutMarkChecks(b)
	s := New(200, 50, Options{})
	s.Write(plainText(4 << 20))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		n = len(s.Snapshot(10000))
	}
	b.ReportMetric(float64(n), "bytes/op")
}
