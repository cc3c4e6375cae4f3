package replay

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/screen"
)

// benchLog is 64 MiB of a session's output written as a holder writes it,
// with the replay checkpoints the screen model writes every 4 MiB.
func benchLog(b *testing.B) (l *outlog.Log, dir string, ckpts []uint64) {
	dir = b.TempDir()
	now := time.Unix(1_763_700_000, 0)
	l, err := outlog.Open(filepath.Join(dir, "log"), outlog.Options{
		Retention: 1 << 30, Sync: outlog.SyncNever, Cols: 120, Rows: 40,
		TimeEvery: 100 * time.Millisecond, Now: func() time.Time { return now },
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	model := screen.New(120, 40, screen.Options{})
	rng := rand.New(rand.NewSource(1))
	next := uint64(4 << 20)
	for l.End() < 64<<20 {
		now = now.Add(time.Duration(rng.Intn(50)) * time.Millisecond)
		chunk := benchChunk(rng)
		if _, err := l.Append(chunk); err != nil {
			b.Fatal(err)
		}
		model.Write(chunk)
		if l.End() >= next {
			data, _ := model.MarshalBinary()
			if err := SaveCheckpoint(dir, l.End(), data, l.First()); err != nil {
				b.Fatal(err)
			}
			ckpts = append(ckpts, l.End())
			next += 4 << 20
		}
	}
	return l, dir, ckpts
}

// benchChunk is what a busy terminal prints in one read of its pty:
// mostly colored lines of a build or a log, now and then a full-screen
// program's redraw, and shell marks.
func benchChunk(rng *rand.Rand) []byte {
	var s strings.Builder
	if rng.Intn(20) == 0 {
		s.WriteString("\x1b[?1049h\x1b[H\x1b[2J")
		for y := 1; y <= 40; y++ {
			fmt.Fprintf(&s, "\x1b[%d;1H\x1b[%dm%6d %-100s\x1b[m", y, 40+y%8, rng.Intn(1e6), strings.Repeat("▒", rng.Intn(100)))
		}
		s.WriteString("\x1b[?1049l")
		return []byte(s.String())
	}
	s.WriteString("\x1b]133;A\x07$ \x1b]133;B\x07make\r\n\x1b]133;C\x07")
	for range 10 + rng.Intn(40) {
		fmt.Fprintf(&s, "\x1b[3%dm[%5d]\x1b[m compiling %s ... %s\r\n", rng.Intn(8), rng.Intn(1e5),
			strings.Repeat("pkg/", 1+rng.Intn(5)), strings.Repeat("ok ", rng.Intn(20)))
	}
	s.WriteString("\x1b]133;D;0\x07")
	return []byte(s.String())
}

// BenchmarkRender64MiB seeks in a session with 64 MiB of output behind it:
// the worst case, just before a checkpoint (a checkpoint's spacing of log
// fed), and an arbitrary offset. Also the first scan of its timeline, and
// a later one with 64 KiB new.
func BenchmarkRender64MiB(b *testing.B) {
	l, dir, ckpts := benchLog(b)
	b.Logf("log: %d MiB, %d replay checkpoints", l.End()>>20, len(ckpts))
	b.Run("worst", func(b *testing.B) {
		for i := range b.N {
			if _, err := Render(l, dir, ckpts[1+i%(len(ckpts)-1)]-1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("any", func(b *testing.B) {
		rng := rand.New(rand.NewSource(2))
		for range b.N {
			if _, err := Render(l, dir, uint64(rng.Int63n(int64(l.End())))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("timeline-first", func(b *testing.B) {
		for range b.N {
			var ix Index
			if _, err := ix.Timeline(l); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("timeline-again", func(b *testing.B) {
		var ix Index
		ix.Timeline(l)
		chunk := []byte(strings.Repeat("x", 64<<10))
		b.ResetTimer()
		for range b.N {
			l.Append(chunk)
			if _, err := ix.Timeline(l); err != nil {
				b.Fatal(err)
			}
		}
	})
}
