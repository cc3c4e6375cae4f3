package outlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"termkeep/internal/rawio"
)

// Cursor reads the stream (Data and Mark payloads, in order) from an offset.
// A Cursor belongs to one goroutine at a time; any number of cursors may read
// while another goroutine appends.
type Cursor struct {
	l   *Log
	off uint64

	// Where off lives on disk. Kept between reads so that sequential reading
	// costs only the bytes read; Seek and a first Read find it by a scan.
	f      *os.File
	seg    uint64 // start of the segment f holds
	placed bool   // pos and rem describe off
	pos    int64  // file position of the next unread byte
	rem    int    // payload bytes of the current record still unread; 0: pos is at a header
	check  bool   // the current record is read from its start, so its checksum can be checked
	recPos int64  // with check: the file position of its header
	sum    uint32 // checksum of what was read of the current record
	want   uint32 // and the checksum it must end with
	hdr    [hdrSize + 8 + maxReason]byte
	// gapLeft is set when pos is just past a Gap record and off is inside
	// it (or at its start): the next Read reports the gapLeft bytes from off
	// as a *GapError.
	gapLeft   uint64
	gapReason string
	// damLeft is set when pos is just past a damaged stretch and off is
	// inside the offsets it stands for: the next Read reports them as a
	// *DamageError.
	damLeft uint64
	// With trackSizes, sizes collects the Size records Read passes, for
	// TakeSizes.
	trackSizes bool
	sizes      []SizeChange
}

var _ io.ReadCloser = (*Cursor)(nil)

// Cursor returns a cursor at off. It opens no file until the first Read.
func (l *Log) Cursor(off uint64) *Cursor { return &Cursor{l: l, off: off} }

// readAt reads the cursor's file as os.File.ReadAt does.
func (c *Cursor) readAt(b []byte, pos int64) (int, error) {
	if c.l.opts.RawIO {
		return rawio.File{File: c.f}.ReadAt(b, pos)
	}
	return c.f.ReadAt(b, pos)
}

// TrackSizes makes the cursor keep the Size records its Reads pass, for
// TakeSizes: what a reader replaying the bytes must apply, each before the
// byte at its offset, found in the same pass over the file as the bytes
// rather than by a second scan of the segment.
func (c *Cursor) TrackSizes() { c.trackSizes = true }

// TakeSizes returns the Size records passed since the last call (or Seek),
// in order, with the offset of the byte each comes before: every one at or
// after the offset the cursor was placed at, up to and possibly just past
// the bytes returned (a record at the offset of the next byte).
func (c *Cursor) TakeSizes() []SizeChange {
	s := c.sizes
	c.sizes = nil
	return s
}

// passed notes a record other than data that the cursor has read past,
// at the stream's offset at.
func (c *Cursor) passed(typ byte, body []byte, at uint64) {
	if typ == recSize && c.trackSizes && len(body) == 4 {
		r := record{typ: recSize, n: len(body)}
		copy(r.small[:], body)
		cols, rows := r.size()
		c.sizes = append(c.sizes, SizeChange{Offset: at, Cols: cols, Rows: rows})
	}
}

// passTail passes the records after the last data record of the segment
// the cursor is leaving, all at its end (c.off): a Size record written
// just before the segment was closed (the next segment opens with the
// same size, but a reader replaying the bytes applies both, as they were
// set).
func (c *Cursor) passTail() {
	s := newScanner(c.f, c.pos, false)
	defer s.release()
	var rec record
	for s.next(&rec) && !isData(rec.typ) {
		c.passed(rec.typ, rec.small[:rec.n], c.off)
	}
}

// Offset returns the offset of the next byte Read returns.
func (c *Cursor) Offset() uint64 { return c.off }

// Seek moves the cursor to off; the next Read finds it on disk.
func (c *Cursor) Seek(off uint64) {
	if off != c.off {
		c.off = off
		c.placed = false
		c.gapLeft, c.damLeft = 0, 0
		c.sizes = nil
	}
}

// Close releases the cursor's file. A later Read opens it again.
func (c *Cursor) Close() error {
	c.placed = false
	c.gapLeft, c.damLeft = 0, 0
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

// view is what a Read needs of the index, copied under one lock.
type view struct {
	closed     bool
	first, end uint64
	seg        uint64 // start of the segment holding the offset
	limit      uint64 // where that segment's known data ends
	stopped    bool   // the log is stopped: bytes from stopAt on are not on disk
	stopAt     uint64
	// Bytes a stop kept in memory are [memStart, memEnd), not logged for
	// memReason.
	memStart, memEnd uint64
	memReason        string
}

func (l *Log) view(off uint64) (v view) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	v.closed, v.first, v.end = l.closed, l.firstLocked(), l.end
	if i := segIndex(l.segs, off); i >= 0 {
		v.seg, v.limit = l.segs[i], v.end
		if i+1 < len(l.segs) {
			v.limit = min(l.segs[i+1], v.end)
		}
	}
	if l.stop != nil {
		v.stopped, v.stopAt = true, l.stop.At
		v.limit = min(v.limit, v.stopAt)
	}
	v.memStart, v.memEnd, v.memReason = l.memStart, l.memStart+uint64(len(l.mem)), l.memReason
	return v
}

// Read fills p with the bytes from Offset on and advances past them.
// It returns (n > 0, nil) when bytes are available, possibly fewer than
// len(p); (0, io.EOF) at End, where more may come later (read-only: Read
// refreshes the Log itself before saying so); (0, ErrCompacted) when Offset
// is below First; (0, ErrClosed) once the Log is closed; (0, *GapError) at
// bytes that were never logged, having moved past them; and an error
// wrapping ErrCorrupt when the segment does not hold what the index promises:
// a *DamageError for the offsets a damaged stretch stands for, having moved
// past them (damage.go).
// With len(p) >= ReadBuffer, no byte is returned before its record's checksum
// has been checked, so damaged bytes are reported, never handed out.
func (c *Cursor) Read(p []byte) (int, error) {
	n := 0
	refreshed, relisted := false, false
	for n < len(p) {
		v := c.l.view(c.off)
		switch {
		case n > 0 && (v.closed || c.off < v.first || c.off >= v.end):
			return n, nil
		case v.closed:
			return 0, ErrClosed
		case c.off < v.first:
			return 0, ErrCompacted
		case c.off >= v.end:
			if c.l.ro && !refreshed {
				refreshed = true
				if err := c.l.Refresh(); err != nil {
					return 0, err
				}
				continue
			}
			return 0, io.EOF
		}
		if c.off >= v.memStart && c.off < v.memEnd {
			// Not logged, but kept from a stop: a cursor that was a moment
			// behind misses nothing.
			k := c.l.memRead(c.off, p[n:])
			c.placed, c.gapLeft = false, 0
			n += k
			c.off += uint64(k)
			continue
		}
		if v.stopped && c.off >= v.stopAt || c.gapLeft > 0 {
			if n > 0 {
				return n, nil
			}
			g := &GapError{Start: c.off, End: c.off + c.gapLeft, Reason: c.gapReason}
			if c.gapLeft == 0 { // past the disk's end, below what is kept
				g.End, g.Reason = v.memStart, v.memReason
				c.placed = false
			}
			if g.Start < v.memStart && v.memStart < g.End {
				g.End = v.memStart // the rest is kept in memory
				c.placed = false
			}
			c.gapLeft = 0
			c.off = g.End
			return 0, g
		}
		if c.damLeft > 0 {
			if n > 0 {
				return n, nil
			}
			e := &DamageError{Start: c.off, End: min(c.off+c.damLeft, max(v.limit, c.off+1)), Segment: segName(c.seg)}
			c.damLeft = 0
			c.off = e.End
			if e.End >= v.limit {
				c.placed = false
			}
			return 0, e
		}
		if !c.placed || c.seg != v.seg {
			if c.placed && c.trackSizes {
				c.passTail()
			}
			err := c.place(v.seg)
			if errors.Is(err, fs.ErrNotExist) && !relisted {
				// Retention deleted it after we looked; in write mode the
				// index already says so, read-only it must be relisted.
				relisted = true
				if c.l.ro {
					c.l.relist()
				}
				continue
			}
			if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("outlog: open segment: %w", err)
			}
			if err != nil {
				return n, err
			}
		}
		k, err := c.fill(p[n:], v.limit-c.off, n > 0)
		n += k
		c.off += uint64(k)
		if err != nil {
			if n > 0 {
				return n, nil // the error recurs at the next Read, from where it stopped
			}
			return 0, err
		}
		if c.gapLeft > 0 || c.damLeft > 0 || !c.placed {
			continue
		}
		if k == 0 && n > 0 {
			return n, nil // the next record is read whole by the next Read
		}
		if k == 0 {
			return n, c.corrupt()
		}
	}
	return n, nil
}

// relist rereads the directory of a read-only log.
func (l *Log) relist() {
	l.tmu.Lock()
	defer l.tmu.Unlock()
	if !l.isClosed() {
		l.resync()
	}
}

// place opens segment seg and finds c.off in it by scanning its headers.
func (c *Cursor) place(seg uint64) error {
	if c.f == nil || c.seg != seg {
		c.Close()
		f, err := os.Open(segPath(c.l.dir, seg))
		if errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err != nil {
			return fmt.Errorf("outlog: open segment: %w", err)
		}
		c.f, c.seg = f, seg
	}
	c.rem, c.check = 0, false
	if c.off == seg {
		c.pos, c.placed = 0, true
		return nil
	}
	s := c.l.newSegmentScanner(c.f, seg)
	defer s.release()
	at := seg
	var rec record
	for s.next(&rec) {
		if rec.typ == recDamage {
			at += rec.skip
			if at > c.off {
				// Inside the damage: the next Read reports the rest of it.
				c.pos, c.placed = s.pos, true
				c.damLeft = at - c.off
				return nil
			}
			if at == c.off {
				c.pos, c.placed = s.pos, true
				return nil
			}
			continue
		}
		if rec.typ == recGap {
			at += rec.gapLen()
			if at > c.off {
				// Inside the gap: the next Read reports the rest of it.
				c.pos, c.placed = s.pos, true
				c.gapLeft, c.gapReason = at-c.off, rec.gapReason()
				return nil
			}
			if at == c.off {
				c.pos, c.placed = s.pos, true
				return nil
			}
			continue
		}
		if !isData(rec.typ) {
			continue
		}
		if at+uint64(rec.n) > c.off {
			skip := c.off - at
			c.pos = rec.pos + hdrSize + int64(skip)
			c.rem = rec.n - int(skip)
			c.placed = true
			return nil
		}
		at += uint64(rec.n)
		if at == c.off {
			c.pos, c.placed = s.pos, true
			return nil
		}
	}
	if s.err != nil {
		return fmt.Errorf("outlog: read segment %s: %w", segName(seg), s.err)
	}
	return fmt.Errorf("outlog: find offset %d in segment %s: %w", c.off, segName(seg), ErrCorrupt)
}

// minRaw is the least room in p for reading raw records into it; below it
// a header is read on its own.
const minRaw = 64

// fill reads up to limit data bytes from the placed position into p.
// held says the caller's buffer already holds bytes before p (from the
// segment before): a record that does not fit p whole is then left for
// the next Read, as one that does not fit after bytes of p's own.
//
// To fill p from many records with one read, it reads the raw records into p
// itself and slides each payload down over the headers before it: the write
// index never passes the read index, so the payloads end up packed at the
// front of p with no buffer of the cursor's own.
func (c *Cursor) fill(p []byte, limit uint64, held bool) (int, error) {
	n := 0
	for n < len(p) && uint64(n) < limit && c.gapLeft == 0 && c.damLeft == 0 && c.placed {
		want := min(uint64(len(p)-n), limit-uint64(n)) // data bytes still wanted
		if c.rem > 0 {
			b := p[n : n+int(min(uint64(c.rem), want))]
			got, err := c.readAt(b, c.pos)
			if got == 0 {
				if err := c.damaged(c.off+uint64(n), limit-uint64(n), c.readErr(err)); err != nil {
					return n, err
				}
				continue
			}
			b = b[:got]
			if c.check {
				sum := crc32.Update(c.sum, castagnoli, b)
				if got == c.rem && sum != c.want {
					// The bytes of this record already returned (it is
					// larger than the caller's buffer) are not taken back.
					if err := c.damaged(c.off+uint64(n), limit-uint64(n), c.corrupt()); err != nil {
						return n, err
					}
					continue
				}
				c.sum = sum
			}
			c.pos += int64(got)
			c.rem -= got
			n += got
			if c.rem == 0 {
				// Done with it: recPos no longer says where damage is.
				c.check = false
			}
			continue
		}
		if len(p)-n < minRaw {
			if n > 0 || held {
				return n, nil // the next record is read whole by the next Read
			}
			if err := c.readHeader(); err != nil {
				if err := c.damaged(c.off, limit, err); err != nil {
					return n, err
				}
			}
			continue
		}

		raw := p[n:]
		start := c.pos
		got, err := c.readAt(raw, c.pos)
		w, r := 0, 0
		bad, stop := false, false
		for r+hdrSize <= got && uint64(w) < want {
			typ, n32, sum := parseHeader(raw[r:])
			if !validHeader(typ, n32) {
				bad = true
				break
			}
			ln, body := int(n32), r+hdrSize
			if !isData(typ) {
				if body+ln > got {
					break // read it whole next time round
				}
				if recordCRC(typ, raw[body:body+ln]) != sum || typ == recGap && binary.BigEndian.Uint64(raw[body:]) > maxGap {
					bad = true
					break
				}
				r = body + ln
				c.pos += int64(hdrSize + ln)
				if typ == recGap {
					c.gapAt(raw[body : body+ln])
					break
				}
				c.passed(typ, raw[body:body+ln], c.off+uint64(n+w))
				continue
			}
			take := min(ln, got-body, int(want-uint64(w)))
			if take == ln {
				if recordCRC(typ, raw[body:body+ln]) != sum {
					bad = true
					break
				}
				copy(raw[w:], raw[body:body+ln])
				w += ln
				r = body + ln
				c.pos += int64(hdrSize + ln)
				continue
			}
			// The record goes on past what was read or what is wanted.
			// Stop before it when p already holds data: the next Read
			// reads it whole into an empty p and checks it before
			// returning any of it. Only a record larger than p is handed
			// out in parts, its checksum running over them.
			if held || n+w > 0 {
				stop = true
				break
			}
			if body+ln <= len(raw) {
				// It fits p, so it is checked before any of it goes: the
				// index ends at a record's end, so one that runs past
				// what is wanted, or past the file, is a damaged header.
				if body+ln > got || recordCRC(typ, raw[body:body+ln]) != sum {
					bad = true
					break
				}
			}
			c.sum, c.want, c.check = recordCRC(typ, raw[body:body+take]), sum, true
			c.recPos = c.pos
			copy(raw[w:], raw[body:body+take])
			w += take
			c.pos += int64(hdrSize + take)
			c.rem = ln - take
			break
		}
		n += w
		if bad {
			if err := c.damaged(c.off+uint64(n), limit-uint64(n), c.corrupt()); err != nil {
				return n, err
			}
			continue
		}
		if stop {
			return n, nil
		}
		if c.pos == start {
			if err := c.damaged(c.off+uint64(n), limit-uint64(n), c.readErr(err)); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// readHeader reads the record at c.pos when p has too little room for raw
// reading: it enters a data record or steps over a Time or Size record.
func (c *Cursor) readHeader() error {
	h := c.hdr[:hdrSize]
	if got, err := c.readAt(h, c.pos); got < hdrSize {
		return c.readErr(err)
	}
	typ, n32, sum := parseHeader(h)
	if !validHeader(typ, n32) {
		return c.corrupt()
	}
	ln := int(n32)
	if isData(typ) {
		if ln == 0 && sum != typeCRC[typ] {
			return c.corrupt()
		}
		c.recPos = c.pos
		c.pos += hdrSize
		c.rem, c.sum, c.want, c.check = ln, typeCRC[typ], sum, true
		return nil
	}
	b := c.hdr[hdrSize : hdrSize+ln]
	if got, err := c.readAt(b, c.pos+hdrSize); got < ln {
		return c.readErr(err)
	}
	if recordCRC(typ, b) != sum || typ == recGap && binary.BigEndian.Uint64(b) > maxGap {
		return c.corrupt()
	}
	c.pos += int64(hdrSize + ln)
	if typ == recGap {
		c.gapAt(b)
	} else {
		c.passed(typ, b, c.off) // only called with nothing read yet
	}
	return nil
}

// gapAt notes that the cursor has just passed the Gap record with payload
// b, which starts where the bytes read so far end.
func (c *Cursor) gapAt(b []byte) {
	r := record{typ: recGap, n: len(b)}
	copy(r.small[:], b)
	c.gapLeft, c.gapReason = r.gapLen(), r.gapReason()
}

// damaged moves the cursor past the damaged stretch at its file position,
// where the stream is at offset at with limit bytes of the segment left:
// the offsets it stands for are reported by the next Read (damLeft), or
// none when it stood for none (a Time record was hit). It returns err when
// the segment's damage map has no stretch there (not damage: a read error,
// or a segment that ends short of what the index promised).
func (c *Cursor) damaged(at, limit uint64, err error) error {
	if !errors.Is(err, ErrCorrupt) {
		return err
	}
	pos := c.pos
	if c.check {
		pos = c.recPos // inside a record handed out in parts
	}
	d, ok := damageAt(c.l.damageMap(c.seg, pos), pos)
	if !ok {
		return err
	}
	c.rem, c.check = 0, false
	switch end := min(d.off+d.span, at+limit); {
	case end > at:
		c.pos, c.damLeft = d.next, end-at
	case c.pos <= d.next:
		c.pos = d.next // it stood for no offsets: a Time record was hit
	default:
		// More of a damaged record was handed out, in parts to a small
		// buffer, than the stretch stands for: find the offset again.
		c.placed = false
	}
	return nil
}

func (c *Cursor) corrupt() error {
	return fmt.Errorf("outlog: read segment %s at %d: %w", segName(c.seg), c.pos, ErrCorrupt)
}

// readErr reports a read that came up short. Everything below the index's
// end was complete when indexed and is never truncated, so running out of
// file there means the segment is damaged.
func (c *Cursor) readErr(err error) error {
	if err == nil || err == io.EOF {
		return c.corrupt()
	}
	return fmt.Errorf("outlog: read segment %s: %w", segName(c.seg), err)
}
