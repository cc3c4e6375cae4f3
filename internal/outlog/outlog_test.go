package outlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"termkeep/internal/rawio"
	"testing"
	"time"
)

func openT(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// readRange reads [from, to) with a fresh cursor and buffers of size bufSize.
func readRange(t testing.TB, l *Log, from, to uint64, bufSize int) []byte {
	t.Helper()
	c := l.Cursor(from)
	defer c.Close()
	var out []byte
	buf := make([]byte, bufSize)
	for c.Offset() < to {
		n, err := c.Read(buf[:min(uint64(len(buf)), to-c.Offset())])
		if err != nil {
			t.Fatalf("Read at %d (from %d, buf %d): %v", c.Offset(), from, bufSize, err)
		}
		if n == 0 {
			t.Fatalf("Read at %d returned 0, nil", c.Offset())
		}
		out = append(out, buf[:n]...)
	}
	return out
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func segFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// segStarts lists the segments' start offsets via the package's own listing.
func segStarts(t testing.TB, dir string) []uint64 {
	t.Helper()
	s, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoundTrip(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("rawio=%v", raw), func(t *testing.T) { testRoundTrip(t, raw) })
	}
}

func testRoundTrip(t *testing.T, raw bool) {
	dir := filepath.Join(t.TempDir(), "log")
	l := openT(t, dir, Options{RawIO: raw, SegmentSize: 64 << 10, Retention: 1 << 40, Sync: SyncNever})
	defer l.Close()
	if _, isRaw := l.tail.(rawio.File); isRaw != raw {
		t.Fatalf("the tail is a %T with RawIO %v", l.tail, raw)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode: %v %v", fi, err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var model []byte
	for i := range 300 {
		n := r.IntN(20000)
		switch {
		case i == 100:
			n = maxPayload + 12345 // splits into several records
		case i%17 == 0:
			n = 0
		case i%5 == 0:
			n = r.IntN(16)
		}
		p := randBytes(r, n)
		var off uint64
		var err error
		if i%7 == 0 {
			off, err = l.AppendMark(p)
		} else {
			off, err = l.Append(p)
		}
		if err != nil {
			t.Fatal(err)
		}
		if off != uint64(len(model)) {
			t.Fatalf("append %d: offset %d, want %d", i, off, len(model))
		}
		model = append(model, p...)
	}
	end := uint64(len(model))
	if l.End() != end || l.First() != 0 {
		t.Fatalf("First, End = %d, %d; want 0, %d", l.First(), l.End(), end)
	}
	for _, f := range segFiles(t, dir) {
		fi, _ := os.Stat(f)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", f, fi.Mode())
		}
		if len(filepath.Base(f)) != 24 {
			t.Errorf("segment name %s", f)
		}
	}
	starts := segStarts(t, dir)
	if len(starts) < 10 {
		t.Fatalf("only %d segments", len(starts))
	}
	offs := []uint64{0, 1, 8, 9, end - 1, end / 2}
	for _, s := range starts {
		offs = append(offs, s, s+1)
		if s > 0 {
			offs = append(offs, s-1)
		}
	}
	for range 30 {
		offs = append(offs, r.Uint64N(end))
	}
	for i, off := range offs {
		bufSize := []int{1, 7, 63, 64, 100, 4096, 64 << 10, 256 << 10}[i%8]
		to := min(end, off+uint64(bufSize)*50+5000)
		got := readRange(t, l, off, to, bufSize)
		if !bytes.Equal(got, model[off:to]) {
			t.Fatalf("read [%d,%d) with buf %d: wrong bytes", off, to, bufSize)
		}
	}
	// One big buffer crosses segments in a single Read.
	c := l.Cursor(starts[1] - 10)
	buf := make([]byte, 256<<10)
	n, err := c.Read(buf)
	if err != nil || n <= 10 || !bytes.Equal(buf[:n], model[starts[1]-10:starts[1]-10+uint64(n)]) {
		t.Fatalf("cross-segment read: n=%d err=%v", n, err)
	}
	c.Close()

	c = l.Cursor(end)
	if n, err := c.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("read at End: %d, %v", n, err)
	}
	// Appended bytes show up for a cursor waiting at the end.
	if _, err := l.Append([]byte("more")); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(buf); n != 4 || err != nil || string(buf[:4]) != "more" {
		t.Fatalf("read after append: %d, %v, %q", n, err, buf[:n])
	}
	c.Close()
}

func TestSegmentLayout(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentSize: 4096, Retention: 1 << 30, Cols: 100, Rows: 30, Sync: SyncNever})
	for range 50 {
		if _, err := l.Append(bytes.Repeat([]byte("x"), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	for _, start := range segStarts(t, dir) {
		b, err := os.ReadFile(segPath(dir, start))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 4096 {
			t.Errorf("segment %d: %d bytes > SegmentSize", start, len(b))
		}
		if b[0] != recTime || b[timeRecLen] != recSize {
			t.Errorf("segment %d does not open with Time, Size", start)
		}
		var rec record
		s := newScanner(bytes.NewReader(b), timeRecLen, true)
		if !s.next(&rec) || rec.typ != recSize {
			t.Fatalf("segment %d: no Size record", start)
		}
		if c, r := rec.size(); c != 100 || r != 30 {
			t.Errorf("segment %d: size %dx%d", start, c, r)
		}
		s.release()
	}
}

func TestReopen(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("rawio=%v", raw), func(t *testing.T) { testReopen(t, raw) })
	}
}

func testReopen(t *testing.T, raw bool) {
	dir := t.TempDir()
	opts := Options{RawIO: raw, SegmentSize: 8 << 10, Retention: 1 << 30}
	l := openT(t, dir, opts)
	var model []byte
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		p := randBytes(r, r.IntN(3000))
		l.Append(p)
		model = append(model, p...)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openT(t, dir, opts)
	if l.End() != uint64(len(model)) || l.Recovered() != 0 {
		t.Fatalf("reopened End %d Recovered %d; want %d, 0", l.End(), l.Recovered(), len(model))
	}
	off, err := l.Append([]byte("after"))
	if err != nil || off != uint64(len(model)) {
		t.Fatalf("append after reopen: %d, %v", off, err)
	}
	model = append(model, "after"...)
	if got := readRange(t, l, 0, l.End(), 4096); !bytes.Equal(got, model) {
		t.Fatal("data differs after reopen")
	}
	l.Close()
}

// lastRecord returns the path of the tail segment and its last record's position.
func lastRecord(t *testing.T, dir string) (string, int64, int) {
	t.Helper()
	starts := segStarts(t, dir)
	path := segPath(dir, starts[len(starts)-1])
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := newScanner(f, 0, true)
	defer s.release()
	var rec, last record
	for s.next(&rec) {
		last = rec
	}
	return path, last.pos, last.n
}

func TestTornTail(t *testing.T) {
	base := t.TempDir()
	build := func(dir string) []byte {
		l := openT(t, dir, Options{SegmentSize: 16 << 10, Retention: 1 << 30})
		r := rand.New(rand.NewPCG(5, 6))
		var model []byte
		for range 12 {
			p := randBytes(r, 1000+r.IntN(2000))
			l.Append(p)
			model = append(model, p...)
		}
		l.SetSize(120, 40)
		p := randBytes(r, 500)
		l.Append(p)
		model = append(model, p...)
		l.Close()
		return model
	}
	type tear struct {
		name string
		do   func(t *testing.T, path string, pos int64, n int)
	}
	var tears []tear
	for _, cut := range []int64{1, 4, 5, 8, 9, 10, 200, 508} {
		tears = append(tears, tear{"cut" + itoa(cut), func(t *testing.T, path string, pos int64, n int) {
			if cut >= hdrSize+int64(n) {
				t.Fatalf("cut %d outside the record", cut)
			}
			if err := os.Truncate(path, pos+cut); err != nil {
				t.Fatal(err)
			}
		}})
	}
	for _, at := range []int64{0, 3, 7, hdrSize, hdrSize + 100, hdrSize + 499} {
		tears = append(tears, tear{"flip" + itoa(at), func(t *testing.T, path string, pos int64, n int) {
			b, _ := os.ReadFile(path)
			b[pos+at] ^= 0x40
			os.WriteFile(path, b, 0o600)
		}})
	}
	tears = append(tears, tear{"garbage", func(t *testing.T, path string, pos int64, n int) {
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		f.Write([]byte{1, 0, 0, 0, 5, 1, 2, 3, 4, 'a', 'b'})
		f.Close()
	}})
	for _, tc := range tears {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(base, tc.name)
			model := build(dir)
			path, pos, n := lastRecord(t, dir)
			tc.do(t, path, pos, n)
			keep := uint64(len(model) - 500)
			if tc.name == "garbage" {
				keep = uint64(len(model))
			}

			ro := openT(t, dir, Options{ReadOnly: true})
			if ro.End() != keep {
				t.Errorf("read-only End %d, want %d", ro.End(), keep)
			}
			fi, _ := os.Stat(path)
			ro.Close()

			l := openT(t, dir, Options{SegmentSize: 16 << 10, Retention: 1 << 30})
			defer l.Close()
			if l.Recovered() <= 0 || l.Recovered() != fi.Size()-pos && tc.name != "garbage" {
				t.Errorf("Recovered %d, file %d, record at %d", l.Recovered(), fi.Size(), pos)
			}
			if l.End() != keep {
				t.Fatalf("End %d, want %d", l.End(), keep)
			}
			if c, r := l.Size(); c != 120 || r != 40 {
				t.Errorf("Size %dx%d", c, r)
			}
			off, err := l.Append([]byte("next"))
			if err != nil || off != keep {
				t.Fatalf("append: %d %v", off, err)
			}
			want := append(model[:keep:keep], "next"...)
			if got := readRange(t, l, 0, l.End(), 1000); !bytes.Equal(got, want) {
				t.Fatal("data differs after recovery")
			}
		})
	}
}

func itoa(i int64) string { return strings.TrimLeft(segName(uint64(i))[:20], "0") + "_" }

func TestEmptyTailSegment(t *testing.T) {
	// A crash between creating a segment and writing its opening records.
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentSize: 4096, Cols: 90, Rows: 20})
	l.Append(make([]byte, 5000))
	l.Close()
	os.WriteFile(segPath(dir, 5000), nil, 0o600)
	l = openT(t, dir, Options{SegmentSize: 4096})
	defer l.Close()
	if l.End() != 5000 {
		t.Fatalf("End %d", l.End())
	}
	if c, r := l.Size(); c != 90 || r != 20 {
		t.Fatalf("Size %dx%d, want the previous segment's", c, r)
	}
	if c, r, err := l.SizeAt(5000); err != nil || c != 90 || r != 20 {
		t.Fatalf("SizeAt %dx%d %v", c, r, err)
	}
	b, _ := os.ReadFile(segPath(dir, 5000))
	if len(b) != timeRecLen+sizeRecLen {
		t.Fatalf("empty tail got %d bytes, want its opening records", len(b))
	}
}

func TestRetention(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("rawio=%v", raw), func(t *testing.T) { testRetention(t, raw) })
	}
}

func testRetention(t *testing.T, raw bool) {
	dir := t.TempDir()
	const ret, seg = 40 << 10, 8 << 10
	l := openT(t, dir, Options{RawIO: raw, Retention: ret, SegmentSize: seg, Sync: SyncNever})
	defer l.Close()
	r := rand.New(rand.NewPCG(7, 8))
	var model []byte
	old := l.Cursor(0)
	defer old.Close()
	buf := make([]byte, 100)
	if _, err := old.Read(buf); err != io.EOF {
		t.Fatalf("read empty log: %v", err)
	}
	for range 400 {
		p := randBytes(r, r.IntN(1500))
		l.Append(p)
		model = append(model, p...)
		first, end := l.First(), l.End()
		if end-first > ret+seg {
			t.Fatalf("retained %d > Retention + one segment", end-first)
		}
		var onDisk uint64
		l.Sync() // removals of dropped segments run in the background
		starts := segStarts(t, dir)
		if starts[0] != first {
			t.Fatalf("oldest segment %d, First %d", starts[0], first)
		}
		onDisk = end - starts[0]
		if onDisk > ret+seg {
			t.Fatalf("on disk %d", onDisk)
		}
	}
	first := l.First()
	if first == 0 {
		t.Fatal("First never moved")
	}
	if _, err := old.Read(buf); !errors.Is(err, ErrCompacted) {
		t.Fatalf("old cursor: %v, want ErrCompacted", err)
	}
	if _, _, err := l.SizeAt(first - 1); !errors.Is(err, ErrCompacted) {
		t.Fatalf("SizeAt below First: %v", err)
	}
	old.Seek(first)
	if got := readRange(t, l, first, l.End(), 4096); !bytes.Equal(got, model[first:]) {
		t.Fatal("retained data differs")
	}
	// A reopen with the same retention keeps the same segments.
	l.Close()
	l2 := openT(t, dir, Options{RawIO: raw, Retention: ret, SegmentSize: seg})
	defer l2.Close()
	if l2.First() != first || l2.End() != uint64(len(model)) {
		t.Fatalf("reopen: First %d End %d", l2.First(), l2.End())
	}
}

// TestHold: a held offset keeps Retention behind it rather than behind the
// end, never more than twice Retention in all, and Release lets it go.
func TestHold(t *testing.T) {
	dir := t.TempDir()
	const ret, seg = 40 << 10, 8 << 10
	l := openT(t, dir, Options{Retention: ret, SegmentSize: seg, Sync: SyncNever})
	defer l.Close()
	chunk := bytes.Repeat([]byte("x"), 1000)
	for l.End() < 30<<10 {
		l.Append(chunk)
	}
	held := l.End() // a relay stops here while the output goes on
	l.Hold(held)
	for l.End() < held+ret {
		l.Append(chunk)
		if l.First() > held-min(held, ret) && l.End()-l.First() <= 2*ret {
			t.Fatalf("at end %d: First %d dropped bytes within Retention of the hold at %d", l.End(), l.First(), held)
		}
	}
	if l.First() != 0 {
		t.Fatalf("First %d: the hold at %d has less than Retention behind it", l.First(), held)
	}
	// The cap: never more than twice Retention (plus the tail segment).
	for l.End() < held+3*ret {
		l.Append(chunk)
		if got := l.End() - l.First(); got > 2*ret+seg {
			t.Fatalf("retained %d with a stale hold, cap %d", got, 2*ret+seg)
		}
	}
	if l.First() == 0 {
		t.Fatal("a stale hold kept everything")
	}
	l.Release()
	for range 2 * seg / len(chunk) {
		l.Append(chunk)
	}
	if got := l.End() - l.First(); got > ret+seg {
		t.Fatalf("retained %d after Release, want at most %d", got, ret+seg)
	}
}

func TestReadOnlyFollow(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir, Options{SegmentSize: 64 << 10, Retention: 1 << 30, Sync: SyncNever})
	ro := openT(t, dir, Options{ReadOnly: true})
	defer ro.Close()
	if _, err := ro.Append([]byte("x")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only Append: %v", err)
	}
	if err := ro.SetSize(1, 1); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only SetSize: %v", err)
	}

	// The writer reports through wrote, never through t: the reader may
	// fail the test while it still writes, and the deferred stop and wait
	// make it finish before the test returns.
	const total = 8 << 20
	var model []byte
	stop := make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		defer w.Close()
		r := rand.New(rand.NewPCG(9, 10))
		for len(model) < total {
			select {
			case <-stop:
				wrote <- errors.New("stopped")
				return
			default:
			}
			p := randBytes(r, 1+r.IntN(40000))
			if _, err := w.Append(p); err != nil {
				wrote <- err
				return
			}
			model = append(model, p...)
			if r.IntN(10) == 0 {
				w.SetSize(uint16(r.IntN(300)+1), 50)
			}
		}
		wrote <- nil
	}()
	waited := false
	defer func() {
		if !waited {
			close(stop)
			<-wrote
		}
	}()

	c := ro.Cursor(0)
	defer c.Close()
	var got []byte
	buf := make([]byte, 128<<10)
	// Stuck means no progress for a long while, not slow: a loaded machine
	// running -race may take minutes for the whole.
	const patience = 60 * time.Second
	deadline := time.Now().Add(patience)
	for len(got) < total {
		n, err := c.Read(buf[:1+rand.IntN(len(buf))])
		switch {
		case err == io.EOF:
			if time.Now().After(deadline) {
				t.Fatalf("stuck at %d for %v", c.Offset(), patience)
			}
			time.Sleep(100 * time.Microsecond)
		case err != nil:
			t.Fatalf("read at %d: %v", c.Offset(), err)
		}
		if n > 0 {
			deadline = time.Now().Add(patience)
		}
		got = append(got, buf[:n]...)
	}
	waited = true
	if err := <-wrote; err != nil {
		t.Fatalf("writer: %v", err)
	}
	for len(got) < len(model) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("read tail at %d: %v", c.Offset(), err)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, model) {
		t.Fatalf("follower read %d bytes that differ from the %d written", len(got), len(model))
	}
	if ro.End() != uint64(len(model)) {
		t.Fatalf("read-only End %d, want %d", ro.End(), len(model))
	}
	wc, wr := w.Size()
	if c, r := ro.Size(); c != wc || r != wr {
		t.Fatalf("read-only Size %dx%d, writer %dx%d", c, r, wc, wr)
	}
}

func TestReadOnlyCompaction(t *testing.T) {
	// A reader that falls behind retention, and one opened on an empty dir.
	dir := t.TempDir()
	ro0, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro0.Close()
	if ro0.End() != 0 || ro0.First() != 0 {
		t.Fatal("empty read-only log not at 0")
	}
	if _, err := Open(filepath.Join(dir, "missing"), Options{ReadOnly: true}); err == nil {
		t.Fatal("read-only Open of a missing dir succeeded")
	}
	w := openT(t, dir, Options{SegmentSize: 4096, Retention: 16 << 10, Sync: SyncNever})
	defer w.Close()
	w.Append([]byte("hello"))
	ro := openT(t, dir, Options{ReadOnly: true})
	defer ro.Close()
	c := ro.Cursor(0)
	defer c.Close()
	buf := make([]byte, 3)
	if n, err := c.Read(buf); n != 3 || err != nil {
		t.Fatalf("read: %d %v", n, err)
	}
	stale := openT(t, dir, Options{ReadOnly: true}) // opened before retention deletes anything
	defer stale.Close()
	for range 100 {
		w.Append(make([]byte, 1000))
	}
	w.Sync() // dropped segments are removed in the background
	// The open segment file still reads; the reader learns of the deletion
	// at the end of what it holds open.
	for err = nil; err == nil; {
		_, err = c.Read(buf)
	}
	if !errors.Is(err, ErrCompacted) {
		t.Fatalf("read behind retention: %v", err)
	}
	// A segment deleted before the reader ever opened it.
	sc := stale.Cursor(0)
	defer sc.Close()
	if _, err := sc.Read(buf); !errors.Is(err, ErrCompacted) {
		t.Fatalf("read of a deleted segment: %v", err)
	}
	if stale.First() != w.First() {
		t.Fatalf("stale reader First %d, writer %d", stale.First(), w.First())
	}
	if err := ro.Refresh(); err != nil {
		t.Fatal(err)
	}
	if ro.First() != w.First() || ro.End() != w.End() {
		t.Fatalf("read-only First/End %d/%d, writer %d/%d", ro.First(), ro.End(), w.First(), w.End())
	}
	// The reader opened before anything existed finds it all.
	c0 := ro0.Cursor(w.First())
	defer c0.Close()
	n, err := c0.Read(make([]byte, 1<<20))
	if err != nil || uint64(n) != w.End()-w.First() {
		t.Fatalf("empty-dir reader: %d %v; want %d", n, err, w.End()-w.First())
	}
}

func TestSizeAt(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentSize: 4096, Retention: 1 << 30, Cols: 81, Rows: 25})
	defer l.Close()
	type change struct {
		off        uint64
		cols, rows uint16
	}
	changes := []change{{0, 81, 25}}
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 200 {
		l.Append(make([]byte, r.IntN(300)))
		if i%9 == 0 {
			c, rw := uint16(r.IntN(500)), uint16(r.IntN(200))
			l.SetSize(c, rw)
			l.SetSize(c, rw) // unchanged: no record
			changes = append(changes, change{l.End(), c, rw})
		}
	}
	want := func(off uint64) (uint16, uint16) {
		c := changes[0]
		for _, ch := range changes {
			if ch.off <= off {
				c = ch
			}
		}
		return c.cols, c.rows
	}
	for off := uint64(0); off <= l.End()+10; off += 7 {
		c, rw, err := l.SizeAt(off)
		wc, wr := want(off)
		if err != nil || c != wc || rw != wr {
			t.Fatalf("SizeAt(%d) = %dx%d %v; want %dx%d", off, c, rw, err, wc, wr)
		}
	}
	for _, ch := range changes {
		if c, rw, _ := l.SizeAt(ch.off); c != ch.cols || rw != ch.rows {
			t.Fatalf("SizeAt(%d) = %dx%d at a change to %dx%d", ch.off, c, rw, ch.cols, ch.rows)
		}
	}
	if len(segStarts(t, dir)) < 5 {
		t.Fatal("test did not cross segments")
	}
	ro := openT(t, dir, Options{ReadOnly: true})
	defer ro.Close()
	for off := uint64(0); off <= l.End(); off += 97 {
		c, rw, _ := ro.SizeAt(off)
		if wc, wr := want(off); c != wc || rw != wr {
			t.Fatalf("read-only SizeAt(%d) = %dx%d; want %dx%d", off, c, rw, wc, wr)
		}
	}
}

func TestOffsetAt(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	l := openT(t, dir, Options{SegmentSize: 2048, Retention: 1 << 30, Now: func() time.Time { return now }})
	defer l.Close()
	// Two 100-byte appends each second: the first gets a Time record.
	marks := map[int]uint64{} // second -> offset of the first byte logged in it
	for i := range 200 {
		now = t0.Add(time.Duration(i/2) * time.Second)
		off, _ := l.Append(make([]byte, 100))
		if i%2 == 0 {
			marks[i/2] = off
		}
	}
	if len(segStarts(t, dir)) < 5 {
		t.Fatal("test did not cross segments")
	}
	for s, off := range marks {
		got, err := l.OffsetAt(t0.Add(time.Duration(s) * time.Second))
		if err != nil || got != off {
			t.Fatalf("OffsetAt(+%ds) = %d %v; want %d", s, got, err, off)
		}
		// Between two Time records: the next one.
		got, _ = l.OffsetAt(t0.Add(time.Duration(s)*time.Second + 300*time.Millisecond))
		if want, ok := marks[s+1]; ok && got != want {
			t.Fatalf("OffsetAt(+%ds+300ms) = %d; want %d", s, got, want)
		}
	}
	if got, _ := l.OffsetAt(t0.Add(-time.Hour)); got != l.First() {
		t.Fatalf("OffsetAt(before) = %d", got)
	}
	if got, _ := l.OffsetAt(t0.Add(time.Hour)); got != l.End() {
		t.Fatalf("OffsetAt(after) = %d; want End %d", got, l.End())
	}
}

func TestFailedWriteStops(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{})
	l.Append([]byte("abc"))
	c := l.Cursor(0)
	defer c.Close()
	// A write that fails stops the log; the bytes keep their offsets.
	l.tail.Close()
	off, err1 := l.Append([]byte("x"))
	_, err2 := l.Append([]byte("y"))
	if off != 3 || !errors.Is(err1, ErrStopped) || !errors.Is(err2, ErrStopped) || l.End() != 5 {
		t.Fatalf("append: %d %v, %v; End %d", off, err1, err2, l.End())
	}
	if st := l.Stopped(); st == nil || st.At != 3 || !strings.Contains(st.Reason, "closed") {
		t.Fatalf("Stopped: %+v", st)
	}
	if err := l.SetSize(1, 2); err != nil {
		t.Fatalf("SetSize while stopped: %v", err)
	}
	if got, err := io.ReadAll(io.LimitReader(onlyReader{c}, 5)); err != nil || string(got) != "abcxy" {
		t.Fatalf("cursor read %q, %v", got, err)
	}
	l.Close()
	if _, err := l.Append([]byte("z")); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after Close: %v", err)
	}
	if _, err := l.AppendMark([]byte("z")); !errors.Is(err, ErrClosed) {
		t.Fatalf("mark after Close: %v", err)
	}
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after Close: %v", err)
	}
	if err := l.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}

	// Reopened, the log is whole up to where it stopped.
	l = openT(t, dir, Options{})
	defer l.Close()
	if l.End() != 3 {
		t.Fatalf("End %d", l.End())
	}
}

func TestSyncPolicies(t *testing.T) {
	for _, p := range []SyncPolicy{SyncInterval, SyncAlways, SyncNever} {
		dir := t.TempDir()
		l := openT(t, dir, Options{Sync: p, SegmentSize: 1024})
		for range 10 {
			if _, err := l.Append(make([]byte, 300)); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAppendAllocs(t *testing.T) {
	l := openT(t, t.TempDir(), Options{Sync: SyncNever})
	defer l.Close()
	p := make([]byte, 64<<10)
	l.Append(p)
	if a := testing.AllocsPerRun(200, func() { l.Append(p) }); a > 0.05 {
		// Rolling a segment allocates its name now and then.
		t.Fatalf("Append allocates %.2f times per call", a)
	}
}

func TestConcurrentCursors(t *testing.T) {
	l := openT(t, t.TempDir(), Options{SegmentSize: 32 << 10, Retention: 1 << 30, Sync: SyncNever})
	defer l.Close()
	var mu sync.Mutex
	var model []byte
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		r := rand.New(rand.NewPCG(13, 14))
		for range 500 {
			p := randBytes(r, r.IntN(5000))
			mu.Lock()
			l.Append(p)
			model = append(model, p...)
			mu.Unlock()
		}
	}()
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := l.Cursor(0)
			defer c.Close()
			buf := make([]byte, 1000*(i+1))
			var got []byte
			for {
				n, err := c.Read(buf)
				got = append(got, buf[:n]...)
				if err == io.EOF {
					select {
					case <-done:
						if c.Offset() == l.End() {
							mu.Lock()
							ok := bytes.Equal(got, model)
							mu.Unlock()
							if !ok {
								t.Error("concurrent cursor read wrong bytes")
							}
							return
						}
					default:
					}
					time.Sleep(50 * time.Microsecond)
				} else if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestImports keeps the log free of the network and database stacks.
func TestImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	forbidden := map[string]string{
		"net/http":     "the log is on the holder's hot path and must stay small",
		"database/sql": "the log is files, not a database",
	}
	for _, dep := range strings.Fields(string(out)) {
		if why, ok := forbidden[dep]; ok {
			t.Errorf("outlog depends on %s: %s", dep, why)
		}
	}
}

// scanSizes returns the Size records at offsets in [lo, hi), in order,
// found by scanning the segments' records on their own: the reference a
// size-tracking cursor (Cursor.TrackSizes) is checked against. Records
// that repeat the size in force (every segment opens with one) are
// included. Offsets below First are skipped.
func (l *Log) scanSizes(lo, hi uint64) ([]SizeChange, error) {
	var out []SizeChange
	err := l.scanRange(lo, hi, func(rec *record, at uint64) {
		if rec.typ == recSize {
			c, r := rec.size()
			out = append(out, SizeChange{Offset: at, Cols: c, Rows: r})
		}
	})
	return out, err
}

// readSizes reads l from from to its end with a size-tracking cursor and
// reads of bufSize, and returns the Size records it passed.
func readSizes(t *testing.T, l *Log, from uint64, bufSize int) []SizeChange {
	t.Helper()
	c := l.Cursor(from)
	defer c.Close()
	c.TrackSizes()
	buf := make([]byte, bufSize)
	var sizes []SizeChange
	for {
		n, err := c.Read(buf)
		sizes = append(sizes, c.TakeSizes()...)
		if err == io.EOF {
			return sizes
		}
		if err != nil || n == 0 {
			t.Fatalf("sizes read from %d, reads of %d: %d %v", from, bufSize, n, err)
		}
	}
}

func TestSizes(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentSize: 64 << 10, Retention: 1 << 30, Cols: 80, Rows: 24})
	defer l.Close()
	want := []SizeChange{{0, 80, 24}}
	data := make([]byte, 10000)
	for i := range 40 {
		l.Append(data)
		if i%7 == 3 {
			c, r := uint16(81+i), uint16(25+i)
			l.SetSize(c, r)
			want = append(want, SizeChange{l.End(), c, r})
		}
	}
	got, err := l.scanSizes(0, l.End())
	if err != nil {
		t.Fatal(err)
	}
	// Drop the repeats every segment opens with.
	var changes []SizeChange
	for _, s := range got {
		if len(changes) == 0 || changes[len(changes)-1].Cols != s.Cols || changes[len(changes)-1].Rows != s.Rows {
			changes = append(changes, s)
		}
	}
	if len(changes) != len(want) {
		t.Fatalf("sizes %v, want %v", changes, want)
	}
	for i := range want {
		if changes[i] != want[i] {
			t.Fatalf("size %d = %v, want %v", i, changes[i], want[i])
		}
	}
	// A window in the middle sees only its own changes.
	mid, _ := l.scanSizes(want[2].Offset, want[3].Offset)
	for _, s := range mid {
		if s.Offset < want[2].Offset || s.Offset >= want[3].Offset {
			t.Fatalf("size %v outside the window", s)
		}
	}
}

// TestCursorSizes: a cursor that tracks sizes reports the Size records of
// what it reads, as scanSizes does, whatever its reads' sizes and wherever it
// starts.
func TestCursorSizes(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentSize: 64 << 10, Retention: 1 << 30, Cols: 80, Rows: 24})
	defer l.Close()
	data := make([]byte, 13000)
	var at []uint64
	for i := range 40 {
		l.Append(data[:1000+i*300])
		if i%7 == 3 {
			l.SetSize(uint16(81+i), uint16(25+i))
			at = append(at, l.End())
		}
	}
	for _, from := range []uint64{0, at[1] - 5000, at[1], at[1] + 1} {
		want, err := l.scanSizes(from, l.End())
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{37, 4096, ReadBuffer} {
			if got := readSizes(t, l, from, size); !slices.Equal(got, want) {
				t.Fatalf("from %d, reads of %d: sizes\n%v\nwant\n%v", from, size, got, want)
			}
		}
	}
}

func TestMarks(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentSize: 64 << 10, Retention: 1 << 30, Cols: 80, Rows: 24})
	defer l.Close()
	var want []Range
	data := make([]byte, 10000)
	for i := range 30 {
		l.Append(data)
		if i%9 == 4 {
			start := l.End()
			l.AppendMark([]byte("── restored ──\r\n"))
			l.AppendMark([]byte("second line\r\n")) // adjacent: merged
			want = append(want, Range{start, l.End()})
		}
	}
	got, err := l.Marks(0, l.End())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("marks %v, want %v", got, want)
	}
	// A window that cuts into a mark is clipped to it.
	m := want[1]
	clipped, err := l.Marks(m.Start+3, m.End-2)
	if err != nil || len(clipped) != 1 || clipped[0] != (Range{m.Start + 3, m.End - 2}) {
		t.Fatalf("clipped marks %v (%v), want [{%d %d}]", clipped, err, m.Start+3, m.End-2)
	}
	// The mark bytes read back like any output.
	cur := l.Cursor(m.Start)
	defer cur.Close()
	buf := make([]byte, m.End-m.Start)
	if _, err := io.ReadFull(cur, buf); err != nil || string(buf) != "── restored ──\r\nsecond line\r\n" {
		t.Fatalf("mark bytes %q, %v", buf, err)
	}
}

// FirstOffset reads First from the directory alone, as retention moves it.
func TestFirstOffset(t *testing.T) {
	dir := t.TempDir()
	if _, err := FirstOffset(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("FirstOffset of a missing directory: %v, want fs.ErrNotExist", err)
	}
	if first, err := FirstOffset(dir); err != nil || first != 0 {
		t.Fatalf("FirstOffset of an empty directory = %d, %v", first, err)
	}
	const ret, seg = 40 << 10, 8 << 10
	l := openT(t, dir, Options{Retention: ret, SegmentSize: seg, Sync: SyncNever})
	defer l.Close()
	// Not a segment: ignored.
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.seg.tmp"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	moved := false
	for range 200 {
		l.Append(randBytes(r, r.IntN(1500)))
		l.Sync() // removals of dropped segments run in the background
		first, err := FirstOffset(dir)
		if err != nil || first != l.First() {
			t.Fatalf("FirstOffset = %d, %v; First = %d", first, err, l.First())
		}
		ro := openT(t, dir, Options{ReadOnly: true})
		if ro.First() != first {
			t.Fatalf("FirstOffset %d, First of a read-only log %d", first, ro.First())
		}
		ro.Close()
		moved = moved || first > 0
	}
	if !moved {
		t.Fatal("retention never moved First")
	}
}
