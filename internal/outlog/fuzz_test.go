package outlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"testing"
	"time"
)

// refDecode is an independent reading of the record format: the data of the
// good records before the first missing, torn or bad one, and the offsets
// they span (data plus the lengths of Gap records). rest is what follows
// them.
func refDecode(b []byte) (data []byte, span uint64, rest int) {
	for len(b) >= 9 {
		typ, n := b[0], binary.BigEndian.Uint32(b[1:5])
		ok := (typ == 1 || typ == 2) && n <= 1<<20 || typ == 3 && (n == 8 || n == 16) || typ == 4 && n == 4 || typ == 5 && n >= 8 && n <= 72
		if !ok || uint64(len(b)-9) < uint64(n) {
			break
		}
		payload := b[9 : 9+n]
		if crc32.Checksum(append([]byte{typ}, payload...), crc32.MakeTable(crc32.Castagnoli)) != binary.BigEndian.Uint32(b[5:9]) {
			break
		}
		if typ == 5 && binary.BigEndian.Uint64(payload) > 1<<50 {
			break
		}
		if typ <= 2 {
			data = append(data, payload...)
			span += uint64(n)
		}
		if typ == 5 {
			span += binary.BigEndian.Uint64(payload)
		}
		b = b[9+n:]
	}
	return data, span, len(b)
}

// validSegment returns the bytes of a real log's single segment.
func validSegment(tb testing.TB) []byte {
	// Not tb.TempDir: a fuzz target's own temp dir trips up the fuzz workers.
	dir, err := os.MkdirTemp("", "outlog")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	l, err := Open(dir, Options{Sync: SyncNever})
	if err != nil {
		tb.Fatal(err)
	}
	l.Append([]byte("hello, "))
	l.AppendMark([]byte("[restored]"))
	l.SetSize(132, 43)
	l.Append(bytes.Repeat([]byte("world "), 50))
	// A gap, as a full disk leaves one.
	l.tail.Close()
	l.Append([]byte("lost"))
	l.tail, _ = os.OpenFile(segPath(dir, 0), os.O_RDWR|os.O_APPEND, 0)
	l.lastTry = time.Time{}
	l.freeSpace = func() (int64, bool) { return 0, false }
	l.Append([]byte("!"))
	l.Close()
	b, err := os.ReadFile(segPath(dir, 0))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func readAllCursor(tb testing.TB, l *Log, bufSize int) ([]byte, error) {
	c := l.Cursor(l.First())
	defer c.Close()
	buf := make([]byte, bufSize)
	var out []byte
	for {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		var de *DamageError
		if errors.Is(err, ErrGap) || errors.As(err, &de) {
			continue // moved past it
		}
		if errors.Is(err, ErrCorrupt) {
			c.Seek(max(l.SkipCorrupt(c.Offset()), c.Offset()+1))
			continue
		}
		if err != nil {
			return out, err
		}
		if n == 0 {
			tb.Fatal("Read returned 0, nil")
		}
	}
}

func FuzzOpen(f *testing.F) {
	seg := validSegment(f)
	f.Add(seg, uint8(0))
	f.Add(seg[:len(seg)-3], uint8(1))
	f.Add(seg[:20], uint8(2))
	f.Add([]byte{}, uint8(3))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0}, uint8(4))
	bad := bytes.Clone(seg)
	bad[40] ^= 1
	f.Add(bad, uint8(5))
	f.Add(append(bytes.Clone(seg), seg...), uint8(6))
	old := appendSize(appendTimeV1(nil, time.Unix(1_700_000_000, 0)), 80, 24)
	f.Add(append(appendHeader(old, recData, []byte("before log times")), "before log times"...), uint8(7))

	f.Fuzz(fuzzOpenBody)
}

func fuzzOpenBody(t *testing.T, b []byte, bufSel uint8) {
	{
		dir := t.TempDir()
		path := segPath(dir, 1000)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		want, span, rest := refDecode(b)
		bufSize := 1 + int(bufSel)%9*int(bufSel)
		// Bytes after the good records are a torn tail or damage with
		// records after it: then End and the data may go on past the
		// prefix, and the writer and every reader must agree on them.
		damaged := rest > 0
		var roEnd uint64
		var roData []byte

		ro, err := Open(dir, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only Open: %v", err)
		}
		if ro.First() != 1000 || ro.End() != 1000+span && !damaged || ro.End() < 1000+span {
			t.Fatalf("read-only First/End %d/%d, want 1000/%d", ro.First(), ro.End(), 1000+span)
		}
		got, err := readAllCursor(t, ro, max(bufSize, ReadBuffer))
		if err != nil || !bytes.Equal(got, want) && !damaged || !bytes.HasPrefix(got, want) {
			t.Fatalf("read-only read: %v, %d bytes, want %d", err, len(got), len(want))
		}
		if _, err := readAllCursor(t, ro, bufSize); err != nil {
			t.Fatalf("read-only read, buffer %d: %v", bufSize, err)
		}
		roEnd, roData = ro.End(), got
		ro.SizeAt(ro.End())
		ro.OffsetAt(time.Unix(0, 0))
		ro.Close()
		after, _ := os.ReadFile(path)
		if !bytes.Equal(after, b) {
			t.Fatal("read-only Open modified the segment")
		}

		w, err := Open(dir, Options{Sync: SyncNever})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer w.Close()
		if w.End() != roEnd || w.Recovered() > int64(rest) {
			t.Fatalf("End %d, read-only %d; recovered %d of %d", w.End(), roEnd, w.Recovered(), rest)
		}
		if got, err := readAllCursor(t, w, ReadBuffer); err != nil || !bytes.Equal(got, roData) {
			t.Fatalf("read after recovery: %v", err)
		}
		off, err := w.Append([]byte("tail"))
		if err != nil || off != roEnd {
			t.Fatalf("Append: %d %v", off, err)
		}
		if got, err := readAllCursor(t, w, ReadBuffer); err != nil || !bytes.Equal(got, append(roData, "tail"...)) {
			t.Fatalf("read after append: %v", err)
		}
		for o := w.First(); o <= w.End(); o += 1 + (w.End()-w.First())/64 {
			if _, _, err := w.SizeAt(o); err != nil {
				t.Fatalf("SizeAt(%d): %v", o, err)
			}
		}
	}
}

// FuzzAppendRead runs a program of appends, size changes, reads, reopens and
// read-only looks against a model of the stream.
func FuzzAppendRead(f *testing.F) {
	f.Add([]byte{0, 10, 3, 0, 0, 200, 4, 3, 5, 1, 7, 2, 3, 3})
	f.Add([]byte{0, 255, 0, 255, 0, 255, 0, 255, 3, 100, 4, 0, 255, 5, 3, 0})
	f.Add([]byte{6, 0, 1, 2, 3, 7, 4, 5})
	f.Add([]byte{0, 40, 2, 30, 2, 60, 0, 9, 2, 30, 2, 60, 4, 0, 2, 30, 2, 60})
	f.Fuzz(func(t *testing.T, prog []byte) {
		dir := t.TempDir()
		opts := Options{SegmentSize: 1024, Retention: 8 << 10, Sync: SyncNever}
		l, err := Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { l.Close() }()
		var model []byte                   // the whole stream; the log keeps its tail
		sizes := []SizeChange{{0, 80, 24}} // every change of size, in order
		arg := func(i int) int {
			if i < len(prog) {
				return int(prog[i])
			}
			return 0
		}
		check := func(log *Log, off uint64, bufSize int) {
			c := log.Cursor(off)
			defer c.Close()
			buf := make([]byte, bufSize)
			n, err := c.Read(buf)
			switch {
			case off < log.First():
				if !errors.Is(err, ErrCompacted) {
					t.Fatalf("Read(%d) below First %d: %v", off, log.First(), err)
				}
			case off >= log.End():
				if n != 0 || err != io.EOF {
					t.Fatalf("Read(%d) at End: %d %v", off, n, err)
				}
			default:
				if err != nil || n == 0 || !bytes.Equal(buf[:n], model[off:off+uint64(n)]) {
					t.Fatalf("Read(%d, buf %d): %d %v", off, bufSize, n, err)
				}
			}
		}
		for i := 0; i < len(prog); i += 2 {
			a := arg(i + 1)
			switch prog[i] % 8 {
			case 0, 1:
				p := make([]byte, a*a/8+a%3)
				for j := range p {
					p[j] = byte(i + j*7)
				}
				var off uint64
				if prog[i]%8 == 0 {
					off, err = l.Append(p)
				} else {
					off, err = l.AppendMark(p)
				}
				if err != nil || off != uint64(len(model)) {
					t.Fatalf("append: %d %v, want %d", off, err, len(model))
				}
				model = append(model, p...)
			case 2:
				if err := l.SetSize(uint16(a), uint16(a/2)); err != nil {
					t.Fatal(err)
				}
				if last := sizes[len(sizes)-1]; last.Cols != uint16(a) || last.Rows != uint16(a/2) {
					sizes = append(sizes, SizeChange{uint64(len(model)), uint16(a), uint16(a / 2)})
				}
				if c, r := l.Size(); c != uint16(a) || r != uint16(a/2) {
					t.Fatal("Size")
				}
			case 3, 6:
				end := uint64(len(model))
				off := end - min(end, uint64(a)*uint64(a))
				if prog[i]%8 == 6 {
					off = end * uint64(a) / 255
				}
				check(l, off, 1+a*37%500)
			case 4:
				l.Close()
				if l, err = Open(dir, opts); err != nil {
					t.Fatal(err)
				}
			case 5, 7:
				// The writer removes a trimmed segment's file just after
				// its index drops it (background.go): until then a reader
				// still counts it. Sync waits for the removal.
				if err := l.Sync(); err != nil {
					t.Fatal(err)
				}
				ro, err := Open(dir, Options{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				if ro.End() != l.End() || ro.First() != l.First() {
					t.Fatalf("read-only First/End %d/%d, writer %d/%d", ro.First(), ro.End(), l.First(), l.End())
				}
				wc, wr := l.Size()
				if c, r := ro.Size(); c != wc || r != wr {
					t.Fatal("read-only Size differs")
				}
				check(ro, l.First()+uint64(a), 1+a*13)
				ro.Close()
			}
			if l.End() != uint64(len(model)) {
				t.Fatalf("End %d, model %d", l.End(), len(model))
			}
			if l.End()-l.First() > uint64(opts.Retention+opts.SegmentSize) {
				t.Fatalf("retained %d", l.End()-l.First())
			}
		}
		got, err := readAllCursor(t, l, 333)
		if err != nil || !bytes.Equal(got, model[l.First():]) {
			t.Fatalf("final read: %v", err)
		}
		// A cursor that tracks sizes passes the Size records a scan finds.
		for _, from := range []uint64{l.First(), l.First() + (l.End()-l.First())/2} {
			want, err := l.scanSizes(from, l.End())
			if err != nil {
				t.Fatal(err)
			}
			if sizes := readSizes(t, l, from, 1+arg(0)*3); !slices.Equal(sizes, want) {
				t.Fatalf("a cursor from %d passed sizes %v, a scan finds %v", from, sizes, want)
			}
		}
		// Chunks reports the size at its start, then every change after
		// it, however many share an offset.
		for _, lo := range []uint64{l.First(), l.First() + (l.End()-l.First())/3} {
			var want, got []SizeChange
			for _, c := range sizes {
				if c.Offset <= lo {
					want = []SizeChange{{lo, c.Cols, c.Rows}}
				} else {
					want = append(want, c)
				}
			}
			err := l.Chunks(lo, l.End(), func(c Chunk) error {
				if c.Kind == ChunkSize {
					got = append(got, SizeChange{c.Offset, c.Cols, c.Rows})
				}
				return nil
			})
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("Chunks from %d reports sizes %v (%v), want %v", lo, got, err, want)
			}
		}
	})
}

// FuzzTimeRecords writes a segment of Time records old and new, with any
// readings, between data records, and reads it back: each chunk has the
// times of the Time record before it (an old record's wall clock as its
// log time too), ClockSteps and its labels take whatever the times are,
// and OffsetAt stays within the log.
func FuzzTimeRecords(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 2, 'a', 1, 0, 0, 0, 0, 0, 0, 0, 9, 2, 'b'})
	f.Add([]byte{0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 'x', 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 2, 'y'})
	f.Add([]byte{1, 0x18, 0, 0, 0, 0, 0, 0, 0, 2, 'o', 0, 0x18, 0, 0, 0, 0, 0, 0, 0, 0x18, 0, 0, 0, 0, 0, 0, 0, 2, 'n'})
	f.Fuzz(func(t *testing.T, ops []byte) {
		type stamp struct {
			time, wall int64
			ok         bool // a Time record came before
		}
		var seg []byte
		var at []stamp // the stamp in force at each data byte
		cur := stamp{}
		for len(ops) > 0 {
			op := ops[0] % 3
			ops = ops[1:]
			switch {
			case op == 0 && len(ops) >= 16:
				w, s := int64(binary.BigEndian.Uint64(ops)), int64(binary.BigEndian.Uint64(ops[8:]))
				seg, cur = appendTime(seg, time.Unix(0, w), s), stamp{s, w, true}
				ops = ops[16:]
			case op == 1 && len(ops) >= 8:
				w := int64(binary.BigEndian.Uint64(ops))
				seg, cur = appendTimeV1(seg, time.Unix(0, w)), stamp{w, w, true}
				ops = ops[8:]
			case op == 2 && len(ops) >= 1:
				n := min(int(ops[0])%8+1, len(ops)-1)
				if n == 0 {
					ops = nil
					break
				}
				seg = append(appendHeader(seg, recData, ops[1:1+n]), ops[1:1+n]...)
				for range n {
					at = append(at, cur)
				}
				ops = ops[1+n:]
			default:
				ops = nil
			}
		}
		dir := t.TempDir()
		if err := os.WriteFile(segPath(dir, 0), seg, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := Open(dir, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if l.End() != uint64(len(at)) {
			t.Fatalf("End %d, want %d", l.End(), len(at))
		}
		var steps ClockSteps
		err = l.Chunks(0, l.End(), func(c Chunk) error {
			if d, ok := steps.Step(c); ok {
				ClockStepLabel(d)
			}
			if c.Kind != ChunkData {
				return nil
			}
			want := at[c.Offset]
			if !want.ok {
				if !c.Time.IsZero() {
					t.Fatalf("offset %d: time %v before any Time record", c.Offset, c.Time)
				}
				return nil
			}
			if c.Time.UnixNano() != want.time || c.Wall.UnixNano() != want.wall {
				t.Fatalf("offset %d: time %d wall %d, want %d %d", c.Offset, c.Time.UnixNano(), c.Wall.UnixNano(), want.time, want.wall)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range at {
			if off, err := l.OffsetAt(time.Unix(0, s.time)); err != nil || off > l.End() {
				t.Fatalf("OffsetAt = %d, %v; End %d", off, err, l.End())
			}
		}
	})
}
