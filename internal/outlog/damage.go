package outlog

import (
	"fmt"
	"os"
	"slices"
)

// Damage is bytes of a segment that no longer hold the records written
// there (garbage written over them, a page a crash lost) while records that
// verify follow them in the same file. It is not a torn tail: a tail is
// damaged only at its very end. Every reader treats it the same way, through
// the scanner and the Cursor:
//
//   - a verified scan that meets a record that does not parse or verify
//     resynchronises on the next header that starts a run of verified
//     records (resync), and calls the stretch in between damaged;
//   - the offsets the stretch stands for are exact when it is one record
//     whose header survived (its payload was hit): that record's length.
//     Otherwise they are estimated (one data record filling the stretch),
//     and the estimate is corrected against the next segment's name, which
//     is the offset of the byte after the damaged segment's last. A writer
//     that finds header damage in its tail starts a new segment (Seal), so
//     that readers of a live log have that anchor too;
//   - a Cursor reading into the stretch returns a *DamageError for its
//     offsets and moves past it; scans report it as one recDamage record.
//
// A writer's recovery (Open) truncates only after the last record that
// verifies, never what follows damage.

// damage is a damaged stretch [pos, next) of a segment file, standing for
// the stream's offsets [off, off+span).
type damage struct {
	pos, next int64
	off, span uint64
	exact     bool // the stretch is one record whose length survived
}

// damageAt returns the stretch of dmg that holds file position pos.
func damageAt(dmg []damage, pos int64) (damage, bool) {
	for _, d := range dmg {
		if d.pos == pos || d.pos < pos && pos < d.next {
			return d, true
		}
	}
	return damage{}, false
}

// resyncChain is how many verified records must follow a header for a scan
// to resume there: a valid-looking header with a matching checksum inside
// garbage is unlikely, a run of them is not met by chance.
const resyncChain = 4

// resync returns the first position after bad where a run of verified
// records starts: resyncChain of them, or fewer that end exactly at the end
// of the file. It reports false when there is none (a torn tail, or a
// record still being written).
func (s *scanner) resync(bad int64) (int64, bool) {
	probe := newScanner(s.r, 0, true)
	probe.limit = s.limit
	defer probe.release()
	var rec record
	for q := bad + 1; ; q++ {
		h := s.window(q, hdrSize)
		if s.err != nil || len(h) < hdrSize {
			return 0, false
		}
		typ, n, _ := parseHeader(h)
		if !validHeader(typ, n) || isData(typ) && n == 0 {
			continue // a writer never logs an empty record
		}
		probe.pos, probe.err = q, nil
		k := 0
		for k < resyncChain && probe.next(&rec) {
			k++
		}
		if probe.err != nil {
			s.err = probe.err
			return 0, false
		}
		if k == resyncChain || k > 0 && len(probe.window(probe.pos, 1)) == 0 {
			return q, true
		}
	}
}

// damageSpan returns the offsets the damaged stretch [bad, next) stands
// for, and whether that is known rather than estimated.
func (s *scanner) damageSpan(bad, next int64) (uint64, bool) {
	h := s.window(bad, hdrSize)
	if len(h) == hdrSize {
		typ, n, sum := parseHeader(h)
		if validHeader(typ, n) && bad+hdrSize+int64(n) == next {
			// When the payload matches its checksum under another type,
			// the type byte is what was hit.
			if n <= maxReason+8 {
				body := s.window(bad+hdrSize, int(n))
				for t := byte(recData); t <= recGap; t++ {
					if t != typ && validHeader(t, n) && len(body) == int(n) && recordCRC(t, body) == sum {
						typ = t
						break
					}
				}
			}
			switch {
			case isData(typ):
				return uint64(n), true
			case typ == recTime, typ == recSize:
				return 0, true
			}
			// A Gap record whose length may be what was hit.
		}
	}
	// Most likely one data record: its header and payload.
	stretch := uint64(next - bad)
	records := (stretch + hdrSize + maxPayload - 1) / (hdrSize + maxPayload)
	return stretch - min(stretch, records*hdrSize), false
}

// anchorDamage makes dmg, found by a scan whose records and damage span
// have offsets, span want instead, by correcting the estimate of the last
// stretch whose span is not known. Later stretches move with it.
func anchorDamage(dmg []damage, have, want uint64) {
	i := len(dmg) - 1
	for i >= 0 && dmg[i].exact {
		i--
	}
	if i < 0 || have == want {
		return
	}
	span := int64(dmg[i].span) + int64(want) - int64(have)
	span = max(span, 0)
	shift := span - int64(dmg[i].span)
	dmg[i].span = uint64(span)
	for j := i + 1; j < len(dmg); j++ {
		dmg[j].off = uint64(int64(dmg[j].off) + shift)
	}
}

// DamageError is returned by Cursor.Read at offsets whose bytes a damaged
// stretch of a segment held (see Damage in damage.go). Read moves the
// cursor to End, so reading on continues after the damage. It matches
// ErrCorrupt.
type DamageError struct {
	Start, End uint64 // the lost bytes are [Start, End)
	Segment    string // the segment file's name
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("outlog: bytes %d-%d are lost to damage in segment %s", e.Start, e.End, e.Segment)
}

func (e *DamageError) Is(target error) bool { return target == ErrCorrupt }

// segDamage is the damage map of one segment, and what it was made for.
type segDamage struct {
	middle bool   // made against the next segment's start
	anchor uint64 // that start, or the tail's end
	upto   int64  // the tail: file bytes the map covers
	dmg    []damage
}

// damageMap returns the damaged stretches of segment seg with absolute
// offsets, covering file position pos (-1: any), from the cache when it
// still holds. A segment that has a successor is read whole and anchored
// to the successor's name; the tail is read up to what the Log has
// indexed and anchored to the Log's end there.
func (l *Log) damageMap(seg uint64, pos int64) []damage {
	l.mu.RLock()
	i := segIndex(l.segs, seg)
	if i < 0 || l.segs[i] != seg {
		l.mu.RUnlock()
		return nil
	}
	middle := i+1 < len(l.segs)
	var anchor uint64
	if middle {
		anchor = l.segs[i+1]
	}
	l.mu.RUnlock()

	l.dmgMu.Lock()
	c, ok := l.dmgCache[seg]
	l.dmgMu.Unlock()
	if ok && c.middle == middle && (middle && c.anchor == anchor || !middle && pos >= 0 && pos < c.upto) {
		return c.dmg
	}

	var upto int64
	if !middle {
		l.tmu.Lock()
		if l.tailStart == seg {
			upto = l.tailPos
		}
		l.mu.RLock()
		anchor = l.end
		if l.stop != nil {
			anchor = l.stop.At // what went by since is not on disk
		}
		l.mu.RUnlock()
		l.tmu.Unlock()
	}
	f, err := os.Open(segPath(l.dir, seg))
	if err != nil {
		return nil
	}
	defer f.Close()
	ts, err := scanVerifiedTo(f, 0, upto)
	if err != nil {
		return nil
	}
	if middle {
		estimated := slices.ContainsFunc(ts.dmg, func(d damage) bool { return !d.exact })
		fi, err := f.Stat()
		if err != nil {
			return nil
		}
		switch {
		case fi.Size() > ts.pos, len(ts.dmg) == 0 && seg+ts.data != anchor:
			// The segment ends short of what its successor's name says
			// (a torn end a crash left): the rest of it is damaged too.
			ts.dmg = append(ts.dmg, damage{pos: ts.pos, next: max(fi.Size(), ts.pos), off: ts.data})
		case seg+ts.data != anchor && !estimated:
			// A hit header that still parsed told a wrong length.
			ts.dmg[len(ts.dmg)-1].exact = false
		}
		anchorDamage(ts.dmg, ts.data, anchor-seg)
	} else if upto > 0 && ts.pos == upto {
		anchorDamage(ts.dmg, ts.data, anchor-seg)
	}
	for j := range ts.dmg {
		ts.dmg[j].off += seg
	}
	if upto == 0 {
		upto = ts.pos
	}
	l.dmgMu.Lock()
	if l.dmgCache == nil {
		l.dmgCache = make(map[uint64]segDamage)
	}
	for s := range l.dmgCache {
		if s < l.First() {
			delete(l.dmgCache, s) // dropped by retention
		}
	}
	l.dmgCache[seg] = segDamage{middle: middle, anchor: anchor, upto: upto, dmg: ts.dmg}
	l.dmgMu.Unlock()
	return ts.dmg
}

// skipDamage returns where the damaged stretch holding off ends, if a
// stretch of its segment's damage map holds it.
func (l *Log) skipDamage(off uint64) (uint64, bool) {
	l.mu.RLock()
	i := segIndex(l.segs, off)
	var seg uint64
	if i >= 0 {
		seg = l.segs[i]
	}
	l.mu.RUnlock()
	if i < 0 {
		return 0, false
	}
	dmg := l.damageMap(seg, -1)
	j := slices.IndexFunc(dmg, func(d damage) bool { return d.off <= off && off < d.off+d.span })
	if j < 0 {
		return 0, false
	}
	return dmg[j].off + dmg[j].span, true
}

// Seal starts a new segment when the tail holds damage whose offsets a
// reader could only estimate (a header was hit), so that the new segment's
// name tells every reader where the damaged one ends. A writer calls it
// when a reader starts following the log (a server's hello); it reads the
// tail's headers, not its data. Read-only: it does nothing.
func (l *Log) Seal() error {
	if l.ro {
		return nil
	}
	l.tmu.Lock()
	defer l.tmu.Unlock()
	if l.werr != nil || l.stop != nil || l.tail == nil || l.end == l.tailStart {
		return nil
	}
	s := newScanner(l.tail, 0, false)
	s.limit = l.tailPos
	defer s.release()
	var rec record
	for s.next(&rec) {
	}
	if s.pos >= l.tailPos || s.err != nil {
		return nil
	}
	if err := l.roll(l.opts.Now()); err != nil {
		l.stopLocked(err, l.opts.Now())
		return err
	}
	return nil
}
