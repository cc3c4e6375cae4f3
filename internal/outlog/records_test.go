package outlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"
)

// chunkAppend is one append of chunkLog: its offset, bytes, kind and the
// clock when it was made.
type chunkAppend struct {
	off  uint64
	data []byte
	mark bool
	now  time.Time
}

// chunkLog writes a log across many small segments with a fake clock that
// moves 400 ms per append, size changes and marks among the output, and
// returns what it wrote.
func chunkLog(t *testing.T, dir string, opts Options) (apps []chunkAppend, sizes []SizeChange, all []byte) {
	t.Helper()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	opts.Now = func() time.Time { return now }
	opts.Cols, opts.Rows = 90, 30
	l := openT(t, dir, opts)
	defer l.Close()
	sizes = []SizeChange{{0, 90, 30}}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		now = t0.Add(time.Duration(i) * 400 * time.Millisecond)
		p := randBytes(r, 1+r.IntN(700))
		mark := i%37 == 5
		var off uint64
		if mark {
			off, _ = l.AppendMark(p)
		} else {
			off, _ = l.Append(p)
		}
		apps = append(apps, chunkAppend{off, p, mark, now})
		all = append(all, p...)
		if i%23 == 11 {
			c, rw := uint16(80+i%7), uint16(24+i%5)
			l.SetSize(c, rw)
			if last := sizes[len(sizes)-1]; last.Cols != c || last.Rows != rw {
				sizes = append(sizes, SizeChange{l.End(), c, rw})
			}
		}
	}
	return apps, sizes, all
}

// stamps returns where the writer put Time records, as (offset, time):
// at the start of each segment (its opening record, written by the append
// that rolled to it) and before an append a second or more after the last.
func stamps(apps []chunkAppend, segs []uint64) (offs []uint64, times []time.Time) {
	var last time.Time
	add := func(off uint64, at time.Time) {
		offs, times, last = append(offs, off), append(times, at), at
	}
	add(0, apps[0].now) // the log was opened at the first append's time
	for _, a := range apps {
		end := a.off + uint64(len(a.data))
		rolled := slices.Contains(segs, a.off) && a.off > 0
		if rolled || a.now.Sub(last) >= time.Second {
			add(a.off, a.now)
		}
		for _, s := range segs {
			if s > a.off && s < end {
				add(s, a.now)
			}
		}
	}
	return offs, times
}

func collectChunks(t *testing.T, l *Log, lo, hi uint64) []Chunk {
	t.Helper()
	var out []Chunk
	err := l.Chunks(lo, hi, func(c Chunk) error {
		c.Data = bytes.Clone(c.Data)
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatalf("Chunks(%d, %d): %v", lo, hi, err)
	}
	return out
}

// Chunks gives the bytes exactly, each with the Time record in force and
// its mark flag, in the pieces they were appended (split only where a
// segment ends), with the size changes at their offsets.
func TestChunks(t *testing.T) {
	dir := t.TempDir()
	apps, sizes, all := chunkLog(t, dir, Options{SegmentSize: 8 << 10, Retention: 1 << 30})
	l := openT(t, dir, Options{ReadOnly: true})
	defer l.Close()
	if len(segStarts(t, dir)) < 5 {
		t.Fatal("test did not cross segments")
	}
	stampOffs, stampTimes := stamps(apps, segStarts(t, dir))
	timeAt := func(off uint64) time.Time {
		at := stampTimes[0]
		for i, o := range stampOffs {
			if o <= off {
				at = stampTimes[i]
			}
		}
		return at
	}
	appAt := func(off uint64) chunkAppend {
		for i := len(apps) - 1; i >= 0; i-- {
			if apps[i].off <= off {
				return apps[i]
			}
		}
		t.Fatalf("no append at %d", off)
		return chunkAppend{}
	}
	sizeAt := func(off uint64) SizeChange {
		s := sizes[0]
		for _, c := range sizes {
			if c.Offset <= off {
				s = c
			}
		}
		return s
	}
	r := rand.New(rand.NewPCG(1, 2))
	ranges := [][2]uint64{{0, l.End()}, {0, l.End() + 100}}
	for range 20 {
		a, b := r.Uint64N(l.End()), r.Uint64N(l.End())
		ranges = append(ranges, [2]uint64{min(a, b), max(a, b)})
	}
	for _, rg := range ranges {
		lo, hi := rg[0], min(rg[1], l.End())
		chunks := collectChunks(t, l, lo, rg[1])
		if len(chunks) == 0 || chunks[0].Kind != ChunkSize || chunks[0].Offset != lo {
			t.Fatalf("[%d, %d): first chunk %+v, want the size at %d", lo, hi, chunks[0], lo)
		}
		if want := sizeAt(lo); chunks[0].Cols != want.Cols || chunks[0].Rows != want.Rows {
			t.Fatalf("[%d, %d): size at start %dx%d, want %dx%d", lo, hi, chunks[0].Cols, chunks[0].Rows, want.Cols, want.Rows)
		}
		var got []byte
		next := lo
		for _, c := range chunks {
			switch c.Kind {
			case ChunkData:
				if c.Offset != next {
					t.Fatalf("[%d, %d): chunk at %d, want %d", lo, hi, c.Offset, next)
				}
				a := appAt(c.Offset)
				if c.Mark != a.mark || !c.Time.Equal(timeAt(c.Offset)) {
					t.Fatalf("chunk at %d: mark %v time %v; want mark %v (the append at %d) time %v", c.Offset, c.Mark, c.Time, a.mark, a.off, timeAt(c.Offset))
				}
				// One chunk per append unless the range or a segment cuts it.
				if end := c.Offset + uint64(len(c.Data)); end != min(a.off+uint64(len(a.data)), hi) && !isSegStart(t, dir, end) {
					t.Fatalf("chunk [%d, %d) is not the append [%d, %d)", c.Offset, end, a.off, a.off+uint64(len(a.data)))
				}
				got = append(got, c.Data...)
				next += uint64(len(c.Data))
			case ChunkSize:
				if want := sizeAt(c.Offset); c.Cols != want.Cols || c.Rows != want.Rows {
					t.Fatalf("size %dx%d at %d, want %dx%d", c.Cols, c.Rows, c.Offset, want.Cols, want.Rows)
				}
			case ChunkGap:
				t.Fatalf("gap in an intact log: %+v", c)
			}
		}
		if !bytes.Equal(got, all[lo:hi]) {
			t.Fatalf("[%d, %d): %d bytes differ from the log's %d", lo, hi, len(got), hi-lo)
		}
		// Every size change inside the range is reported.
		for _, s := range sizes[1:] {
			if s.Offset <= lo || s.Offset > hi {
				continue
			}
			found := false
			for _, c := range chunks {
				found = found || (c.Kind == ChunkSize && c.Offset == s.Offset && c.Cols == s.Cols && c.Rows == s.Rows)
			}
			if !found {
				t.Fatalf("[%d, %d): size change %+v not reported", lo, hi, s)
			}
		}
	}
}

func isSegStart(t *testing.T, dir string, off uint64) bool {
	for _, s := range segStarts(t, dir) {
		if s == off {
			return true
		}
	}
	return false
}

// Bytes retention dropped and a damaged segment are reported as gaps, with
// the bytes on either side exact, never glued together.
func TestChunksGaps(t *testing.T) {
	dir := t.TempDir()
	_, _, all := chunkLog(t, dir, Options{SegmentSize: 8 << 10, Retention: 40 << 10})
	l := openT(t, dir, Options{ReadOnly: true})
	first := l.First()
	if first == 0 {
		t.Fatal("retention dropped nothing")
	}
	check := func(l *Log, want func(off uint64) bool, kinds map[uint64]error) {
		t.Helper()
		next := uint64(0)
		gaps := 0
		for _, c := range collectChunks(t, l, 0, l.End()) {
			switch c.Kind {
			case ChunkData:
				if c.Offset != next || !bytes.Equal(c.Data, all[c.Offset:c.Offset+uint64(len(c.Data))]) {
					t.Fatalf("data at %d (next %d) differs", c.Offset, next)
				}
				next += uint64(len(c.Data))
			case ChunkGap:
				wantErr, ok := kinds[c.Offset]
				if !ok || c.Offset != next || !errors.Is(c.Err, wantErr) {
					t.Fatalf("gap %d-%d (%v) at next %d; want gaps %v", c.Offset, c.End, c.Err, next, kinds)
				}
				next = c.End
				gaps++
			}
		}
		if next != l.End() || gaps != len(kinds) {
			t.Fatalf("walk ended at %d with %d gaps; want %d and %d", next, gaps, l.End(), len(kinds))
		}
	}
	check(l, nil, map[uint64]error{0: ErrCompacted})
	l.Close()

	// Damage the data of the second retained segment.
	segs := segStarts(t, dir)
	path := segPath(dir, segs[1])
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := layout(t, path, segs[1])
	b[len(b)/2] ^= 0x55
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	lo, hi := lost(recs, int64(len(b)/2), int64(len(b)/2+1))
	l = openT(t, dir, Options{ReadOnly: true})
	defer l.Close()
	var damaged uint64
	l.Chunks(segs[1], l.End(), func(c Chunk) error {
		if c.Kind == ChunkGap && damaged == 0 {
			damaged = c.Offset
			if !errors.Is(c.Err, ErrCorrupt) || c.Offset != lo || c.End != hi {
				t.Errorf("gap %d-%d (%v); want the damaged record's %d-%d", c.Offset, c.End, c.Err, lo, hi)
			}
		}
		return nil
	})
	if damaged == 0 {
		t.Fatal("the damage went unnoticed")
	}
	check(l, nil, map[uint64]error{0: ErrCompacted, damaged: ErrCorrupt})
}

// An error from fn stops the walk and is returned as is.
func TestChunksStops(t *testing.T) {
	dir := t.TempDir()
	chunkLog(t, dir, Options{SegmentSize: 8 << 10})
	l := openT(t, dir, Options{ReadOnly: true})
	defer l.Close()
	stop := errors.New("stop")
	n := 0
	err := l.Chunks(0, l.End(), func(c Chunk) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	if err != stop || n != 10 {
		t.Fatalf("Chunks = %v after %d calls", err, n)
	}
}

// A Gap record (what a log that stopped on a full disk writes when it
// resumes) is reported as a gap with its reason, and the bytes after it
// keep their offsets and their own time. The log is written as before the
// log time existed: Time records of the wall clock alone.
func TestChunksGapRecord(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(1_700_000_000, 0)
	var b []byte
	b = appendSize(appendTimeV1(b, t0), 80, 24)
	b = append(appendHeader(b, recData, []byte("hello ")), "hello "...)
	gap := binary.BigEndian.AppendUint64(nil, 100)
	gap = append(gap, "disk full"...)
	b = append(appendHeader(appendTimeV1(b, t0.Add(5*time.Second)), recGap, gap), gap...)
	b = append(appendHeader(appendTimeV1(b, t0.Add(9*time.Second)), recData, []byte("world")), "world"...)
	if err := os.WriteFile(segPath(dir, 0), b, 0o600); err != nil {
		t.Fatal(err)
	}
	l := openT(t, dir, Options{ReadOnly: true})
	defer l.Close()
	if l.End() != 111 {
		t.Fatalf("End = %d, want 111", l.End())
	}
	got := collectChunks(t, l, 0, l.End())
	if len(got) != 4 || got[0].Kind != ChunkSize || got[1].Kind != ChunkData || got[2].Kind != ChunkGap || got[3].Kind != ChunkData {
		t.Fatalf("chunks: %+v", got)
	}
	var ge *GapError
	if g := got[2]; g.Offset != 6 || g.End != 106 || !errors.As(g.Err, &ge) || ge.Reason != "disk full" {
		t.Fatalf("gap chunk %+v", g)
	}
	if d := got[3]; d.Offset != 106 || string(d.Data) != "world" || !d.Time.Equal(t0.Add(9*time.Second)) {
		t.Fatalf("chunk after the gap: %+v", d)
	}
	if d := got[1]; string(d.Data) != "hello " || !d.Time.Equal(t0) {
		t.Fatalf("chunk before the gap: %+v", d)
	}
}

// Size changes logged at one offset (a window shrunk and grown again while
// the program printed nothing) are each reported, in order: the shrink
// alone may have scrolled the screen. Those at lo are folded into the size
// in force there; those at hi are included. Two sit in the tail of a full
// segment, at the offset where the next one starts.
func TestChunksEverySize(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentSize: 250, Retention: 1 << 30, Cols: 80, Rows: 24})
	data := func(n int) {
		t.Helper()
		if _, err := l.Append(bytes.Repeat([]byte{'x'}, n)); err != nil {
			t.Fatal(err)
		}
	}
	size := func(c, r uint16) {
		t.Helper()
		if err := l.SetSize(c, r); err != nil {
			t.Fatal(err)
		}
	}
	data(200) // fills the first segment
	size(80, 12)
	size(80, 24) // both in its tail, at 200
	data(10)     // rolls: the next segment opens at 200, at 80x24
	size(80, 12)
	size(80, 24)
	size(80, 24) // no change: not logged
	data(10)
	size(100, 30)
	size(80, 24) // at the end
	if got := segStarts(t, dir); !slices.Contains(got, 200) {
		t.Fatalf("segments start at %v; the test wants one at 200", got)
	}
	changes := []SizeChange{{0, 80, 24}, {200, 80, 12}, {200, 80, 24}, {210, 80, 12}, {210, 80, 24}, {220, 100, 30}, {220, 80, 24}}
	l.Close()
	ro := openT(t, dir, Options{ReadOnly: true})
	defer ro.Close()
	for _, lo := range []uint64{0, 50, 199, 200, 201, 210, 215, 220} {
		for _, hi := range []uint64{0, 50, 199, 200, 201, 210, 215, 220, 300} {
			if hi < lo {
				continue
			}
			var want []SizeChange
			for _, c := range changes {
				switch {
				case c.Offset <= lo:
					want = []SizeChange{{lo, c.Cols, c.Rows}}
				case c.Offset <= hi:
					want = append(want, c)
				}
			}
			var got []SizeChange
			for _, c := range collectChunks(t, ro, lo, hi) {
				if c.Kind == ChunkSize {
					got = append(got, SizeChange{c.Offset, c.Cols, c.Rows})
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("Chunks(%d, %d) reports sizes %v, want %v", lo, hi, got, want)
			}
		}
	}
}
