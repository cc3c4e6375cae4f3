package outlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// laid is one record of a clean segment: file bytes [pos, end), offsets
// [off, off+span).
type laid struct {
	pos, end  int64
	off, span uint64
}

// layout lists the records of a clean segment file.
func layout(t testing.TB, path string, start uint64) []laid {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := newScanner(f, 0, true)
	defer s.release()
	var out []laid
	off := start
	var rec record
	for s.next(&rec) {
		out = append(out, laid{rec.pos, s.pos, off, rec.span()})
		off += rec.span()
	}
	if fi, _ := f.Stat(); s.pos != fi.Size() {
		t.Fatalf("layout of %s stops at %d of %d", path, s.pos, fi.Size())
	}
	return out
}

// lost returns the offsets of the records that file bytes [lo, hi) touch:
// what a reader cannot have once they are damaged.
func lost(recs []laid, lo, hi int64) (uint64, uint64) {
	var a, b uint64
	found := false
	for _, r := range recs {
		if r.end <= lo || r.pos >= hi {
			continue
		}
		if !found {
			a, found = r.off, true
		}
		b = r.off + r.span
	}
	return a, b
}

// damageLog writes a log of records of many sizes (some shorter than the
// damage, some long), with Time and Size records between them, and
// returns the stream.
func damageLog(t testing.TB, dir string, opts Options, total int) (*Log, []byte) {
	r := rand.New(rand.NewPCG(3, 9))
	now := time.Unix(1700000000, 0)
	opts.Now = func() time.Time { return now }
	l := openT(t, dir, opts)
	var all []byte
	for i := 0; len(all) < total; i++ {
		n := 1 + r.IntN(40)
		if i%7 == 0 {
			n = 500 + r.IntN(3000)
		}
		p := randBytes(r, n)
		if _, err := l.Append(p); err != nil {
			t.Fatal(err)
		}
		all = append(all, p...)
		now = now.Add(400 * time.Millisecond)
		if i%50 == 0 {
			l.SetSize(uint16(80+i%40), 24)
		}
	}
	return l, all
}

// readMarked reads l from First to End with buffers of size bufSize,
// checking every byte against want at its offset, and returns the ranges
// it was told are damaged.
func readMarked(t testing.TB, l *Log, want []byte, bufSize int) []Range {
	t.Helper()
	c := l.Cursor(l.First())
	defer c.Close()
	buf := make([]byte, bufSize)
	var dmg []Range
	for steps := 0; c.Offset() < l.End(); steps++ {
		if steps > 1<<20 {
			t.Fatalf("reader stalled at %d", c.Offset())
		}
		off := c.Offset()
		n, err := c.Read(buf)
		if n > 0 {
			if off+uint64(n) > uint64(len(want)) || !bytes.Equal(buf[:n], want[off:off+uint64(n)]) {
				t.Fatalf("wrong bytes at %d (+%d), damage %v", off, n, dmg)
			}
			continue
		}
		var de *DamageError
		switch {
		case errors.As(err, &de):
			if de.Start != off || de.End <= off || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("damage %d-%d read at %d", de.Start, de.End, off)
			}
			if c.Offset() != de.End {
				t.Fatalf("cursor at %d after damage %d-%d", c.Offset(), de.Start, de.End)
			}
			if next := l.SkipCorrupt(off); next != de.End {
				t.Fatalf("SkipCorrupt(%d) = %d, the cursor says %d", off, next, de.End)
			}
			if k := len(dmg); k > 0 && dmg[k-1].End == de.Start {
				dmg[k-1].End = de.End // one stretch read in two parts
			} else {
				dmg = append(dmg, Range{de.Start, de.End})
			}
		case err == io.EOF:
			t.Fatalf("EOF at %d, End %d", off, l.End())
		default:
			t.Fatalf("read at %d: %v", off, err)
		}
	}
	return dmg
}

// chunkGaps returns the damaged ranges Chunks reports, checking its data
// against want.
func chunkGaps(t testing.TB, l *Log, want []byte) []Range {
	t.Helper()
	var gaps []Range
	next := l.First()
	err := l.Chunks(l.First(), l.End(), func(c Chunk) error {
		switch c.Kind {
		case ChunkData:
			if c.Offset != next || !bytes.Equal(c.Data, want[c.Offset:c.Offset+uint64(len(c.Data))]) {
				t.Fatalf("chunk at %d (next %d) differs", c.Offset, next)
			}
			next += uint64(len(c.Data))
		case ChunkGap:
			if c.Offset != next || !errors.Is(c.Err, ErrCorrupt) {
				t.Fatalf("gap %d-%d (%v) at %d", c.Offset, c.End, c.Err, next)
			}
			if g := GapOf(c); g.Reason != "lost to a damaged log segment" {
				t.Fatalf("gap reason %q", g.Reason)
			}
			gaps = append(gaps, Range{c.Offset, c.End})
			next = c.End
		}
		return nil
	})
	if err != nil || next != l.End() {
		t.Fatalf("Chunks ended at %d of %d: %v", next, l.End(), err)
	}
	return gaps
}

type garble struct {
	name string
	at   int64 // file position in the damaged segment; < 0: from its end
	n    int
	fill func(r *rand.Rand, b []byte)
}

func garbles() []garble {
	random := func(r *rand.Rand, b []byte) {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}
	zeros := func(r *rand.Rand, b []byte) { clear(b) }
	// Garbage that parses as a short data header at every byte.
	headers := func(r *rand.Rand, b []byte) {
		for i := range b {
			b[i] = []byte{recData, 0, 0, 0, 3}[i%5]
		}
	}
	return []garble{
		{"80 bytes at 1000", 1000, 80, random},
		{"100 bytes at 5000", 5000, 100, random},
		{"the opening records", 0, 30, random},
		{"one byte of a header", 1200, 1, func(r *rand.Rand, b []byte) { b[0] ^= 0x80 }},
		{"zeros", 3000, 200, zeros},
		{"header-like garbage", 2000, 120, headers},
		{"a long stretch", 4000, 9000, random},
	}
}

// A damaged stretch in the middle of a segment is a marked gap of exactly
// the records it hit: the records after it are read at their offsets by a
// Cursor, Chunks and SkipCorrupt alike, in the only segment of a live log
// (the writer's own reader; a read-only reader once the writer has sealed
// the segment) and in a middle segment.
func TestDamage(t *testing.T) {
	for _, where := range []string{"only segment", "middle segment"} {
		for _, g := range garbles() {
			t.Run(where+"/"+g.name, func(t *testing.T) {
				b := make([]byte, g.n)
				g.fill(rand.New(rand.NewPCG(1, uint64(g.at))), b)
				damageCase(t, where == "middle segment", g.at, b, true)
			})
		}
	}
}

// damageCase writes garbage over a segment of a log at file position at:
// its only segment, live, or a middle one. The garbage is a flip mask when
// xor (so that it always changes what it covers).
func damageCase(t *testing.T, middle bool, at int64, garbage []byte, xor bool) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1 << 20, Retention: 1 << 30, Sync: SyncNever}
	total := 40 << 10
	if middle {
		opts.SegmentSize, total = 24<<10, 110<<10
	}
	w, all := damageLog(t, dir, opts, total)
	defer func() { w.Close() }()
	segs := segStarts(t, dir)
	seg := segs[0]
	if middle {
		if len(segs) < 4 {
			t.Fatalf("segments %v", segs)
		}
		seg = segs[1]
	}
	path := segPath(dir, seg)
	recs := layout(t, path, seg)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if at+int64(len(garbage)) > int64(len(b)) {
		t.Fatalf("segment of %d bytes", len(b))
	}
	orig := bytes.Clone(b[at : at+int64(len(garbage))])
	for i, g := range garbage {
		if xor {
			b[at+int64(i)] ^= g
		} else {
			b[at+int64(i)] = g
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b[at:at+int64(len(garbage))], at); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The records the changed bytes touch are what is lost.
	var want []Range
	first, last := -1, -1
	for i := range orig {
		if orig[i] != b[at+int64(i)] {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first >= 0 {
		if lo, hi := lost(recs, at+int64(first), at+int64(last)+1); hi > lo {
			want = []Range{{lo, hi}}
		}
	}
	check := func(name string, l *Log) {
		t.Helper()
		if l.End() != uint64(len(all)) {
			t.Fatalf("%s: End %d, want %d", name, l.End(), len(all))
		}
		// Buffers of ReadBuffer or more: a smaller one may be handed
		// bytes of a record before its checksum is known.
		for _, bufSize := range []int{ReadBuffer, 3*ReadBuffer + 17} {
			if got := readMarked(t, l, all, bufSize); !equalRanges(got, want) {
				t.Fatalf("%s: a cursor (buffer %d) reads damage %v, want %v", name, bufSize, got, want)
			}
		}
		if got := chunkGaps(t, l, all); !equalRanges(got, want) {
			t.Fatalf("%s: Chunks reports damage %v, want %v", name, got, want)
		}
		end := uint64(len(all))
		if len(want) > 0 {
			end = want[0].End
		}
		if c, r, err := l.SizeAt(end); err != nil || c == 0 || r == 0 {
			t.Fatalf("%s: SizeAt(%d) = %dx%d, %v", name, end, c, r, err)
		}
		if _, err := l.OffsetAt(time.Unix(1700000000, 0).Add(time.Hour)); err != nil {
			t.Fatalf("%s: OffsetAt: %v", name, err)
		}
	}
	// The writer's own cursors, before anything else.
	check("writer", w)
	if !middle {
		if err := w.Seal(); err != nil {
			t.Fatal(err)
		}
	}
	p := []byte("after the damage")
	if off, err := w.Append(p); err != nil || off != uint64(len(all)) {
		t.Fatalf("Append: %d %v", off, err)
	}
	all = append(all, p...)
	check("writer after append", w)
	ro := openT(t, dir, Options{ReadOnly: true})
	check("read-only", ro)
	ro.Close()
	// Reopened, as a restored holder does: nothing after the damage is
	// taken for a torn tail.
	w.Close()
	w = openT(t, dir, opts)
	if w.Recovered() != 0 {
		t.Fatalf("reopen dropped %d bytes", w.Recovered())
	}
	check("reopened", w)
}

// FuzzDamage writes any garbage anywhere over the only segment of a live
// log or a middle segment: readers lose exactly the records it changed.
func FuzzDamage(f *testing.F) {
	f.Add(false, uint16(1000), bytes.Repeat([]byte{0x5a}, 80))
	f.Add(true, uint16(5000), bytes.Repeat([]byte{0xff}, 100))
	f.Add(true, uint16(0), []byte{1})
	f.Add(false, uint16(17), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, middle bool, at uint16, garbage []byte) {
		if len(garbage) > 4096 {
			garbage = garbage[:4096]
		}
		damageCase(t, middle, int64(at)%20000, garbage, true)
	})
}

func equalRanges(a, b []Range) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A read-only reader that opened a live log before the writer sealed its
// damaged tail follows it onto the new segment, at the writer's offsets.
func TestDamageReaderFollowsSeal(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1 << 20, Retention: 1 << 30, Sync: SyncNever}
	w, all := damageLog(t, dir, opts, 40<<10)
	defer w.Close()
	lo, hi := garbleHeader(t, dir)

	ro := openT(t, dir, Options{ReadOnly: true})
	defer ro.Close()
	// Before the seal the reader can only estimate where the damage ends;
	// it is sure only of where it begins.
	if ro.SureEnd() != lo {
		t.Fatalf("read-only SureEnd %d before the seal, want %d where the damage begins", ro.SureEnd(), lo)
	}
	if err := w.Seal(); err != nil {
		t.Fatal(err)
	}
	if n := len(segStarts(t, dir)); n != 2 {
		t.Fatalf("%d segments after Seal", n)
	}
	p := []byte("more output")
	w.Append(p)
	all = append(all, p...)
	for deadline := time.Now().Add(5 * time.Second); ro.End() != w.End(); {
		if time.Now().After(deadline) {
			t.Fatalf("read-only End %d, writer %d", ro.End(), w.End())
		}
		ro.Refresh()
	}
	if got := readMarked(t, ro, all, ReadBuffer); !equalRanges(got, []Range{{lo, hi}}) {
		t.Fatalf("damage %v, want %d-%d", got, lo, hi)
	}
	if ro.SureEnd() != ro.End() {
		t.Fatalf("read-only SureEnd %d after the seal, End %d", ro.SureEnd(), ro.End())
	}
	// A second Seal finds the damage behind it: no new segment.
	w.Seal()
	if n := len(segStarts(t, dir)); n != 2 {
		t.Fatalf("%d segments after a second Seal", n)
	}
}

// A torn tail is still a torn tail: garbage at the very end of the last
// segment, with no record after it, is truncated by a writer's recovery.
func TestDamageAtTheEndIsATornTail(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1 << 20, Retention: 1 << 30, Sync: SyncNever}
	w, all := damageLog(t, dir, opts, 20<<10)
	w.Close()
	f, _ := os.OpenFile(segPath(dir, 0), os.O_WRONLY|os.O_APPEND, 0)
	f.Write(bytes.Repeat([]byte{recData, 0, 0, 0, 3}, 20))
	f.Close()
	l := openT(t, dir, opts)
	defer l.Close()
	if l.Recovered() != 100 || l.End() != uint64(len(all)) {
		t.Fatalf("Recovered %d, End %d; want 100, %d", l.Recovered(), l.End(), len(all))
	}
}

// A writer reopening a log whose only segment lost a header (a restored
// holder; no seal could anchor it) keeps every record after the damage,
// at offsets it and every reader agree on.
func TestDamageReopenedKeepsWhatFollows(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1 << 20, Retention: 1 << 30, Sync: SyncNever}
	w, all := damageLog(t, dir, opts, 40<<10)
	w.Close()
	_, hi := garbleHeader(t, dir)

	l := openT(t, dir, opts)
	defer l.Close()
	if l.Recovered() != 0 {
		t.Fatalf("Recovered %d: the records after the damage were taken for a torn tail", l.Recovered())
	}
	ro := openT(t, dir, Options{ReadOnly: true})
	defer ro.Close()
	if ro.End() != l.End() {
		t.Fatalf("read-only End %d, writer %d", ro.End(), l.End())
	}
	for _, log := range []*Log{l, ro} {
		c := log.Cursor(0)
		buf := make([]byte, ReadBuffer)
		var before, after []byte
		damaged := 0
		for c.Offset() < log.End() {
			n, err := c.Read(buf)
			switch {
			case n > 0 && damaged == 0:
				before = append(before, buf[:n]...)
			case n > 0:
				after = append(after, buf[:n]...)
			case errors.Is(err, ErrCorrupt):
				damaged++
			default:
				t.Fatalf("read at %d: %v", c.Offset(), err)
			}
		}
		c.Close()
		if damaged != 1 || !bytes.HasPrefix(all, before) || !bytes.Equal(after, all[hi:]) {
			t.Fatalf("%d damaged ranges, %d bytes before, %d after (want %d)", damaged, len(before), len(after), len(all)-int(hi))
		}
	}
	if off, err := l.Append([]byte("x")); err != nil || off != l.End()-1 {
		t.Fatalf("Append: %d %v", off, err)
	}
}

// garbleHeader writes 80 bytes of garbage over segment 0 of dir from the
// header of a short record at or after byte 1000, which leaves the
// damage's length unknown, and returns the offsets of the records hit.
func garbleHeader(t *testing.T, dir string) (lo, hi uint64) {
	t.Helper()
	path := segPath(dir, 0)
	recs := layout(t, path, 0)
	at := int64(-1)
	for _, r := range recs {
		if r.pos >= 1000 && r.end-r.pos < 60 {
			at = r.pos
			break
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, 80), at); err != nil {
		t.Fatal(err)
	}
	return lost(recs, at, at+80)
}

// A Read that fills its buffer up to the last few bytes stops before the
// next record rather than hand out its start unchecked, and a record
// handed out in parts to a small buffer leaves nothing behind that a
// later damaged record in the same segment is taken for. Both read a
// 9.8 MB log with one flipped byte as cut short at the damage.
func TestDamageAfterAFullBuffer(t *testing.T) {
	for _, room := range []int{1, 9, 30, minRaw - 1, minRaw, minRaw + 1} {
		for _, hit := range []string{"next record", "later record"} {
			t.Run(fmt.Sprintf("%d bytes left/%s", room, hit), func(t *testing.T) {
				dir := t.TempDir()
				now := time.Unix(1700000000, 0)
				l := openT(t, dir, Options{SegmentSize: 1 << 20, Retention: 1 << 30, Sync: SyncNever, Now: func() time.Time { return now }})
				defer l.Close()
				r := rand.New(rand.NewPCG(uint64(room), 5))
				// What precedes the first record (the opening Time and
				// Size records) is in the file, not the stream.
				lead := layout(t, segPath(dir, 0), 0)
				pre := 0
				if len(lead) > 0 {
					pre = int(lead[len(lead)-1].end)
				}
				var all []byte
				first := ReadBuffer - pre - room - hdrSize
				for i, n := 0, first; i < 40; i, n = i+1, 4095 {
					p := randBytes(r, n)
					if _, err := l.Append(p); err != nil {
						t.Fatal(err)
					}
					all = append(all, p...)
				}
				recs := layout(t, segPath(dir, 0), 0)
				var data []laid
				for _, rec := range recs {
					if rec.span > 0 {
						data = append(data, rec)
					}
				}
				target := data[1]
				if hit == "later record" {
					target = data[30]
				}
				at := target.pos + hdrSize + 2
				flipByte(t, segPath(dir, 0), at, 0x20)
				want := []Range{{target.off, target.off + target.span}}
				for _, bufSize := range []int{ReadBuffer, 256 << 10} {
					if got := readMarked(t, l, all, bufSize); !equalRanges(got, want) {
						t.Fatalf("a cursor (buffer %d) reads damage %v, want %v", bufSize, got, want)
					}
				}
				ro := openT(t, dir, Options{ReadOnly: true})
				defer ro.Close()
				if got := readMarked(t, ro, all, 256<<10); !equalRanges(got, want) {
					t.Fatalf("read-only: damage %v, want %v", got, want)
				}
			})
		}
	}
}

// flipByte XORs the byte at pos of the file at path with mask.
func flipByte(t testing.TB, path string, pos int64, mask byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= mask
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
}
