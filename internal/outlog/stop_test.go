package outlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// disk is a file system with a byte budget: a write that does not fit is
// cut short and fails with ENOSPC, as a full disk's does.
type disk struct {
	mu   sync.Mutex
	free int64
}

func (d *disk) setFree(n int64) {
	d.mu.Lock()
	d.free = n
	d.mu.Unlock()
}

func (d *disk) wrap(f *os.File) segmentFile { return &diskFile{File: f, d: d} }

type diskFile struct {
	*os.File
	d *disk
}

func (f *diskFile) Write(p []byte) (int, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	n := int(min(int64(len(p)), max(f.d.free, 0)))
	k, err := f.File.Write(p[:n])
	f.d.free -= int64(k)
	if err == nil && k < len(p) {
		err = &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return k, err
}

func (f *diskFile) Truncate(size int64) error {
	fi, err := f.File.Stat()
	if err != nil {
		return err
	}
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	f.d.mu.Lock()
	f.d.free += max(fi.Size()-size, 0)
	f.d.mu.Unlock()
	return nil
}

// openOnDisk opens a log whose segment files all live on d.
func openOnDisk(t *testing.T, dir string, d *disk, opts Options) *Log {
	t.Helper()
	l := openT(t, dir, opts)
	l.wrap = d.wrap
	l.tail = d.wrap(l.tail.(*os.File))
	l.freeSpace = func() (int64, bool) { return 0, false } // d has no minimum to resume
	return l
}

// lineStream makes numbered lines: every byte is checkable.
func lineStream(from, count int) []byte {
	var b bytes.Buffer
	for i := from; i < from+count; i++ {
		fmt.Fprintf(&b, "line %08d ........................................\r\n", i)
	}
	return b.Bytes()
}

// readStream reads l from 0 to its end, returning the bytes and the gaps.
func readStream(t *testing.T, l *Log, bufSize int) ([]byte, []GapError) {
	t.Helper()
	c := l.Cursor(l.First())
	defer c.Close()
	buf := make([]byte, bufSize)
	var out []byte
	var gaps []GapError
	for {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		var ge *GapError
		switch {
		case errors.As(err, &ge):
			if ge.Start != c.Offset()-(ge.End-ge.Start) || c.Offset() != ge.End {
				t.Fatalf("gap %+v, cursor at %d", ge, c.Offset())
			}
			gaps = append(gaps, *ge)
		case err == io.EOF:
			return out, gaps
		case err != nil:
			t.Fatalf("read at %d: %v", c.Offset(), err)
		case n == 0:
			t.Fatal("Read returned 0, nil")
		}
	}
}

// TestDiskFullStopsAndResumes fills the disk at many points relative to
// segment boundaries, and checks every promise of a stop: the appender is
// never failed, a live cursor misses nothing, the gap is recorded once
// space returns with the offsets going on, and a reopened log agrees.
func TestDiskFullStopsAndResumes(t *testing.T) {
	for _, budget := range []int64{0, 100, 16 << 10, 32<<10 - 40, 32 << 10, 32<<10 + 30, 50 << 10} {
		for _, bufSize := range []int{100, ReadBuffer} {
			t.Run(fmt.Sprintf("free%d-buf%d", budget, bufSize), func(t *testing.T) {
				testDiskFull(t, budget, bufSize)
			})
		}
	}
}

func testDiskFull(t *testing.T, budget int64, bufSize int) {
	dir := t.TempDir()
	now := time.Unix(1_700_000_000, 0)
	d := &disk{free: 1 << 40}
	l := openOnDisk(t, dir, d, Options{SegmentSize: 32 << 10, Retention: 1 << 30, Now: func() time.Time { return now }})
	defer l.Close()
	d.setFree(budget)

	live := l.Cursor(0)
	defer live.Close()
	var want, seen []byte
	follow := func() {
		buf := make([]byte, bufSize)
		for {
			n, err := live.Read(buf)
			seen = append(seen, buf[:n]...)
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("live cursor at %d: %v", live.Offset(), err)
			}
		}
	}

	// Output until the disk is full, and on for a while.
	line := 0
	var stoppedAt uint64
	stopped := false
	for i := 0; i < 60; i++ {
		p := lineStream(line, 20)
		line += 20
		off, err := l.Append(p)
		if off != uint64(len(want)) {
			t.Fatalf("append %d at %d, want %d", i, off, len(want))
		}
		want = append(want, p...)
		if err != nil && !errors.Is(err, ErrStopped) {
			t.Fatalf("append: %v", err)
		}
		if err != nil && !stopped {
			stopped = true
			st := l.Stopped()
			if st == nil || st.Reason != "disk full" {
				t.Fatalf("Stopped: %+v", st)
			}
			stoppedAt = st.At
		}
		if i%3 == 0 {
			follow()
		}
		now = now.Add(100 * time.Millisecond)
	}
	if !stopped {
		t.Fatal("the disk never filled")
	}
	if l.End() != uint64(len(want)) {
		t.Fatalf("End %d, appended %d", l.End(), len(want))
	}
	follow()
	if !bytes.Equal(seen, want) {
		t.Fatalf("live cursor saw %d bytes, want %d (first difference at %d)", len(seen), len(want), firstDiff(seen, want))
	}
	if err := l.SetSize(100, 30); err != nil {
		t.Fatalf("SetSize while stopped: %v", err)
	}

	// Space returns: the next append (a retry is due) resumes.
	l.freeSpace = func() (int64, bool) { return resumeFree - 1, true }
	if err := l.Retry(); err == nil || l.Stopped() == nil {
		t.Fatalf("resumed with less than %d bytes free: %v", resumeFree, err)
	}
	l.freeSpace = func() (int64, bool) { return resumeFree, true }
	d.setFree(1 << 40)
	gapEnd := l.End()
	now = now.Add(time.Second)
	p := lineStream(line, 20)
	if off, err := l.Append(p); err != nil || off != gapEnd {
		t.Fatalf("append after space returned: %d, %v", off, err)
	}
	want = append(want, p...)
	if st := l.Stopped(); st != nil {
		t.Fatalf("still stopped: %+v", st)
	}
	follow()
	if !bytes.Equal(seen, want) {
		t.Fatalf("live cursor after resume: first difference at %d", firstDiff(seen, want))
	}

	// On a nearly full disk a retry may fit its gap record and stop again
	// at the next write: every gap is inside [stoppedAt, gapEnd), and every
	// byte read is the one at its offset.
	check := func(name string, l *Log) {
		c := l.Cursor(0)
		defer c.Close()
		buf := make([]byte, bufSize)
		var gaps []GapError
		for {
			off := c.Offset()
			n, err := c.Read(buf)
			if !bytes.Equal(buf[:n], want[off:off+uint64(n)]) {
				t.Fatalf("%s: bytes at %d differ", name, off)
			}
			var ge *GapError
			if errors.As(err, &ge) {
				if ge.Start != off || c.Offset() != ge.End || ge.Start < stoppedAt || ge.End > gapEnd || ge.Reason != "disk full" {
					t.Fatalf("%s: gap %+v at %d, cursor at %d; stopped [%d, %d)", name, ge, off, c.Offset(), stoppedAt, gapEnd)
				}
				gaps = append(gaps, *ge)
				continue
			}
			if err == io.EOF {
				break
			}
			if err != nil || n == 0 {
				t.Fatalf("%s: read at %d: %d, %v", name, off, n, err)
			}
		}
		if c.Offset() != uint64(len(want)) || len(gaps) == 0 || gaps[0].Start != stoppedAt || gaps[len(gaps)-1].End != gapEnd {
			t.Fatalf("%s: ended at %d of %d; gaps %+v, stopped [%d, %d)", name, c.Offset(), len(want), gaps, stoppedAt, gapEnd)
		}
		// A cursor placed inside the last gap reports the rest of it.
		last := gaps[len(gaps)-1]
		mid := last.Start + (last.End-last.Start)/2
		c2 := l.Cursor(mid)
		defer c2.Close()
		var ge *GapError
		if _, err := c2.Read(make([]byte, bufSize)); !errors.As(err, &ge) || ge.Start != mid || ge.End != gapEnd {
			t.Fatalf("%s: read inside the gap: %v", name, err)
		}
		if cols, rows, err := l.SizeAt(gapEnd); err != nil || cols != 100 || rows != 30 {
			t.Fatalf("%s: size after the gap %dx%d, %v", name, cols, rows, err)
		}
	}
	// The writer keeps the unlogged bytes for its cursors for a while.
	now = now.Add(memLinger)
	p = lineStream(line+20, 1)
	if _, err := l.Append(p); err != nil {
		t.Fatal(err)
	}
	want = append(want, p...)
	check("writer", l)
	ro := openT(t, dir, Options{ReadOnly: true})
	check("read-only", ro)
	ro.Close()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	re := openT(t, dir, Options{})
	defer re.Close()
	if re.End() != uint64(len(want)) {
		t.Fatalf("reopened End %d, want %d", re.End(), len(want))
	}
	check("reopened", re)
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestStoppedRetriesAtMostOncePerSecond: a full disk is not hammered with a
// write per chunk, and Retry resumes a quiet session's log.
func TestStoppedRetriesAtMostOncePerSecond(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	d := &disk{free: 1 << 40}
	l := openOnDisk(t, t.TempDir(), d, Options{Now: func() time.Time { return now }})
	defer l.Close()
	d.setFree(0)
	if _, err := l.Append([]byte("hello")); !errors.Is(err, ErrStopped) {
		t.Fatalf("append on a full disk: %v", err)
	}
	d.setFree(1 << 40)
	now = now.Add(500 * time.Millisecond)
	if _, err := l.Append([]byte("world")); !errors.Is(err, ErrStopped) {
		t.Fatalf("append half a second later: %v (a retry was not due)", err)
	}
	if err := l.Retry(); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	if st := l.Stopped(); st != nil {
		t.Fatalf("still stopped: %+v", st)
	}
	now = now.Add(memLinger)
	l.Append([]byte("!"))
	_, gaps := readStream(t, l, 64)
	if len(gaps) != 1 || gaps[0].Start != 0 || gaps[0].End != 10 {
		t.Fatalf("gaps %+v", gaps)
	}
}

// TestStoppedKeepsTheNewestBytes: a stop longer than memory holds keeps the
// newest bytes for the live cursor, which sees a gap for the rest.
func TestStoppedKeepsTheNewestBytes(t *testing.T) {
	d := &disk{free: 1 << 40}
	l := openOnDisk(t, t.TempDir(), d, Options{})
	defer l.Close()
	d.setFree(0)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for range 3 * memKeep / len(chunk) {
		if _, err := l.Append(chunk); !errors.Is(err, ErrStopped) {
			t.Fatalf("append: %v", err)
		}
	}
	c := l.Cursor(0)
	defer c.Close()
	var ge *GapError
	if _, err := c.Read(make([]byte, 1024)); !errors.As(err, &ge) || ge.Start != 0 || ge.End == 0 || ge.Reason != "disk full" {
		t.Fatalf("read below what is kept: %v", err)
	}
	n, err := io.Copy(io.Discard, onlyReader{c})
	if err != nil || uint64(n) != l.End()-ge.End || n < memKeep {
		t.Fatalf("read the kept bytes: %d, %v (end %d, gap end %d)", n, err, l.End(), ge.End)
	}
}

type onlyReader struct{ c *Cursor }

func (r onlyReader) Read(p []byte) (int, error) { return r.c.Read(p) }

// TestSkip: a reopened log told that its writer's offsets went further
// records the difference as a gap and continues after it.
func TestSkip(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{})
	l.Append([]byte("hello"))
	if err := l.Skip(3, "x"); err != nil || l.End() != 5 {
		t.Fatalf("Skip below End: %v, End %d", err, l.End())
	}
	if err := l.Skip(105, "not logged"); err != nil || l.End() != 105 {
		t.Fatalf("Skip: %v, End %d", err, l.End())
	}
	if off, err := l.Append([]byte("world")); err != nil || off != 105 {
		t.Fatalf("append after Skip: %d %v", off, err)
	}
	l.Close()
	for _, ro := range []bool{false, true} {
		l := openT(t, dir, Options{ReadOnly: ro})
		got, gaps := readStream(t, l, 64)
		if string(got) != "helloworld" || len(gaps) != 1 || gaps[0].Start != 5 || gaps[0].End != 105 || gaps[0].Reason != "not logged" || l.End() != 110 {
			t.Fatalf("read-only %v: %q, gaps %+v, End %d", ro, got, gaps, l.End())
		}
		l.Close()
	}
}
