package outlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Record layout: type uint8 | length uint32 BE | crc32c(type, payload) uint32 BE | payload.
const (
	hdrSize = 9
	// maxPayload bounds a record. It is small enough that a reader's buffer
	// holds any record whole (ReadBuffer), so a Cursor checks a record's CRC
	// before it hands out any of its bytes; a header whose length was
	// damaged is then caught before the bytes it misframes are returned.
	maxPayload = 64 << 10

	recData = 1 // session output
	recMark = 2 // bytes termkeep wrote into the stream itself
	recTime = 3 // wall clock, then log time: unix nanoseconds int64 BE each (before: the wall clock alone)
	recSize = 4 // cols uint16 BE, rows uint16 BE
	recGap  = 5 // length uint64 BE, then a UTF-8 reason: offsets the log could not keep

	// recDamage is never written: a scanner reports a damaged stretch of a
	// segment as one record of this type (see damage.go).
	recDamage = 0xff

	maxReason = 64
	// maxGap bounds a Gap record's length, so that a damaged one can never
	// push offsets near overflow: a petabyte of output is never missed.
	maxGap = 1 << 50

	timeRecLen = hdrSize + 16
	// A Time record written before the log time was recorded beside the
	// wall clock holds the wall clock alone; it is still read.
	timeRecLenV1 = hdrSize + 8
	sizeRecLen   = hdrSize + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// typeCRC holds the checksum of each record type's byte, the common prefix of
// every record's checksum.
var typeCRC = func() (t [6]uint32) {
	for i := range t {
		t[i] = crc32.Update(0, castagnoli, []byte{byte(i)})
	}
	return t
}()

func isData(typ byte) bool { return typ == recData || typ == recMark }

// span is how many offsets a record takes: a data record its payload, a gap
// record the bytes it stands for, anything else none.
func (r *record) span() uint64 {
	switch {
	case isData(r.typ):
		return uint64(r.n)
	case r.typ == recGap:
		return r.gapLen()
	case r.typ == recDamage:
		return r.skip
	}
	return 0
}

// validHeader rejects what a writer never produces, so garbage is never
// mistaken for a long record that is "still being written".
func validHeader(typ byte, n uint32) bool {
	switch typ {
	case recData, recMark:
		return n <= maxPayload
	case recTime:
		return n == 16 || n == 8
	case recSize:
		return n == 4
	case recGap:
		return n >= 8 && n <= 8+maxReason
	}
	return false
}

func parseHeader(b []byte) (typ byte, n uint32, sum uint32) {
	return b[0], binary.BigEndian.Uint32(b[1:5]), binary.BigEndian.Uint32(b[5:9])
}

func recordCRC(typ byte, payload []byte) uint32 {
	return crc32.Update(typeCRC[typ], castagnoli, payload)
}

func appendHeader(b []byte, typ byte, payload []byte) []byte {
	b = append(b, typ)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	return binary.BigEndian.AppendUint32(b, recordCRC(typ, payload))
}

// appendTime appends a Time record: what the wall clock read, and the log
// time (see Options.Mono) at the same moment.
func appendTime(b []byte, wall time.Time, steady int64) []byte {
	var p [16]byte
	binary.BigEndian.PutUint64(p[:8], uint64(wall.UnixNano()))
	binary.BigEndian.PutUint64(p[8:], uint64(steady))
	return append(appendHeader(b, recTime, p[:]), p[:]...)
}

func appendSize(b []byte, cols, rows uint16) []byte {
	var p [4]byte
	binary.BigEndian.PutUint16(p[0:], cols)
	binary.BigEndian.PutUint16(p[2:], rows)
	return append(appendHeader(b, recSize, p[:]), p[:]...)
}

// Segment files are named by the offset of their first data byte, padded so
// that name order is offset order.
const segSuffix = ".seg"

func segName(start uint64) string { return fmt.Sprintf("%020d%s", start, segSuffix) }

func segPath(dir string, start uint64) string { return filepath.Join(dir, segName(start)) }

// listSegments returns the start offsets of dir's segments, ascending.
// Anything not named like a segment is not ours and is left alone.
func listSegments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []uint64
	for _, e := range ents {
		name := e.Name()
		if len(name) != 20+len(segSuffix) || !strings.HasSuffix(name, segSuffix) || !e.Type().IsRegular() {
			continue
		}
		start, err := strconv.ParseUint(name[:20], 10, 64)
		if err != nil {
			continue
		}
		segs = append(segs, start)
	}
	return segs, nil // os.ReadDir sorts by name, and padding makes that numeric order
}

// record is one record met by a scanner.
type record struct {
	typ   byte
	n     int                 // payload length
	pos   int64               // file position of the header
	small [8 + maxReason]byte // the payload of a record that is not data
	skip  uint64              // recDamage: the offsets the damaged stretch stands for
}

// wall is a Time record's wall clock reading.
func (r *record) wall() int64 { return int64(binary.BigEndian.Uint64(r.small[:8])) }

// steady is a Time record's log time: the wall clock's reading for a
// record that holds only that.
func (r *record) steady() int64 {
	if r.n < 16 {
		return r.wall()
	}
	return int64(binary.BigEndian.Uint64(r.small[8:16]))
}

func (r *record) size() (cols, rows uint16) {
	return binary.BigEndian.Uint16(r.small[0:]), binary.BigEndian.Uint16(r.small[2:])
}

func (r *record) gapLen() uint64 { return binary.BigEndian.Uint64(r.small[:8]) }

func (r *record) gapReason() string { return string(r.small[8:r.n]) }

func appendGap(b []byte, n uint64, reason string) []byte {
	if len(reason) > maxReason {
		reason = reason[:maxReason]
	}
	p := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(reason)), n)
	p = append(p, reason...)
	return append(appendHeader(b, recGap, p), p...)
}

// scanner walks the records of one segment file with large reads.
// With verify, it reads every payload and stops at the first record whose
// checksum fails; without, it only reads headers (and the small Time and
// Size payloads), jumping over data. Given the segment's damaged stretches
// (dmg, or load to find them when a header does not parse), it reports each
// as one record of type recDamage and goes on after it.
type scanner struct {
	r      io.ReaderAt
	sb     *scanBuf
	buf    []byte // sb's
	lo     int64  // file position of buf[0]
	n      int    // bytes of buf that hold file data
	pos    int64  // file position of the next header
	off    uint64
	limit  int64 // > 0: the file is read as if it ended here
	verify bool
	err    error // a read error other than the end of the file

	dmg  []damage
	load func() []damage
}

func newScanner(r io.ReaderAt, pos int64, verify bool) *scanner {
	sb := scanBufs.Get().(*scanBuf)
	return &scanner{r: r, sb: sb, buf: sb.B, pos: pos, verify: verify}
}

// release ends the scan: its buffer's pages go back to the system and the
// buffer to the pool.
func (s *scanner) release() {
	s.sb.HandBack(0)
	scanBufs.Put(s.sb)
	s.sb, s.buf = nil, nil
}

// window returns up to want bytes of the file from at (fewer at the end of
// the file), reading only when the buffer does not already hold them.
func (s *scanner) window(at int64, want int) []byte {
	if s.limit > 0 {
		if at >= s.limit {
			return nil
		}
		want = int(min(int64(want), s.limit-at))
	}
	if at >= s.lo && at+int64(want) <= s.lo+int64(s.n) {
		i := int(at - s.lo)
		return s.buf[i : i+want]
	}
	k, err := s.r.ReadAt(s.buf, at)
	if err != nil && err != io.EOF {
		s.err = err
	}
	if s.limit > 0 {
		k = int(min(int64(k), s.limit-at))
	}
	s.lo, s.n = at, k
	return s.buf[:min(want, k)]
}

// next reads the record at s.pos into rec and moves past it. It returns false
// at the end of the file, at a torn or invalid record that no known damaged
// stretch covers, or on a read error (then s.err is set); s.pos is left at
// the record that stopped it.
func (s *scanner) next(rec *record) bool {
	if s.skipDamage(rec) {
		return true
	}
	if s.record(rec) {
		s.off += rec.span()
		return true
	}
	if s.err == nil && s.load != nil {
		s.dmg, s.load = s.load(), nil
		return s.skipDamage(rec)
	}
	return false
}

// skipDamage reports the damaged stretch at s.pos, if there is one, as a
// record of type recDamage spanning the offsets it stands for.
func (s *scanner) skipDamage(rec *record) bool {
	d, ok := damageAt(s.dmg, s.pos)
	if !ok {
		return false
	}
	rec.typ, rec.n, rec.pos, rec.skip = recDamage, 0, s.pos, 0
	if end := d.off + d.span; end > s.off {
		rec.skip = end - s.off
	}
	s.off += rec.skip
	s.pos = d.next
	return true
}

// record parses the record at s.pos.
func (s *scanner) record(rec *record) bool {
	h := s.window(s.pos, hdrSize)
	if len(h) < hdrSize {
		return false
	}
	typ, n, sum := parseHeader(h)
	if !validHeader(typ, n) {
		return false
	}
	rec.typ, rec.n, rec.pos = typ, int(n), s.pos
	switch {
	case !isData(typ):
		b := s.window(s.pos+hdrSize, int(n))
		if len(b) < int(n) || recordCRC(typ, b) != sum {
			return false
		}
		copy(rec.small[:], b)
		if typ == recGap && rec.gapLen() > maxGap {
			return false
		}
	case s.verify:
		c := typeCRC[typ]
		for at, left := s.pos+hdrSize, int(n); left > 0; {
			b := s.window(at, min(left, len(s.buf)))
			if len(b) == 0 {
				return false
			}
			c = crc32.Update(c, castagnoli, b)
			at += int64(len(b))
			left -= len(b)
		}
		if c != sum {
			return false
		}
	}
	s.pos += hdrSize + int64(n)
	return true
}

// tailScan is what a verified scan of a segment found.
type tailScan struct {
	pos        int64  // file position after the last good record
	data       uint64 // offsets the good records and the damaged stretches span
	sized      bool   // a Size record was found
	cols, rows uint16 // the last Size record's
	sizeOff    uint64 // data offset of the last Size record, relative to the scan's start
	timed      bool   // a Time record was found
	steady     int64  // the last Time record's log time
	dmg        []damage
}

// scanVerified walks verified records from pos, on across damaged
// stretches (resync), to the end of the last record that verifies: what
// follows it is a torn tail, or a record still being written. Damage is
// reported in ts.dmg with offsets relative to the scan's start.
func scanVerified(r io.ReaderAt, pos int64) (tailScan, error) {
	return scanVerifiedTo(r, pos, 0)
}

// scanVerifiedTo is scanVerified of the file's first limit bytes (all of
// it when limit is 0).
func scanVerifiedTo(r io.ReaderAt, pos, limit int64) (tailScan, error) {
	s := newScanner(r, pos, true)
	s.limit = limit
	defer s.release()
	var ts tailScan
	var rec record
	for {
		for s.next(&rec) {
			if rec.typ == recSize {
				ts.sized = true
				ts.cols, ts.rows = rec.size()
				ts.sizeOff = s.off
			}
			if rec.typ == recTime {
				ts.timed, ts.steady = true, rec.steady()
			}
		}
		if s.err != nil {
			break
		}
		next, ok := s.resync(s.pos)
		if !ok {
			break
		}
		d := damage{pos: s.pos, next: next, off: s.off}
		d.span, d.exact = s.damageSpan(s.pos, next)
		ts.dmg = append(ts.dmg, d)
		s.off += d.span
		s.pos = next
	}
	ts.pos, ts.data = s.pos, s.off
	return ts, s.err
}
