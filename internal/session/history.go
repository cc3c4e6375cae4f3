package session

import (
	"context"

	"termkeep/internal/screen"
)

// A viewer resynced after it fell behind keeps the history it has drawn
// and gets the lines that scrolled away since, up to its own scrollback
// limit (screen.SnapshotKeep), not a reset that wipes its history. How
// many lines scrolled away since it stopped is told by marks the model
// notes as it goes: at every offset that is a multiple of markEvery, the
// count of lines its screen has pushed into its history. The viewer is
// first sent the output up to the next such offset (at most markEvery
// bytes), so that the count at its point is exact: no line is lost or
// drawn twice at the seam.

// markEvery is the spacing of the model's marks, in bytes of output.
const markEvery = 4 << 10

// marksKept bounds the marks kept: 16 MiB of output. A viewer further
// behind gets as much history as it asks for.
const marksKept = 4096

// scrollMarks is the model's count of lines scrolled into its history,
// and that count at the latest marksKept multiples of markEvery. Guarded
// by the model's lock.
type scrollMarks struct {
	total uint64   // lines scrolled into the history since the model began
	ring  []uint64 // at index i%marksKept: total at offset i*markEvery
	next  uint64   // the index after the newest mark
	n     int      // marks held, ending at next
}

// note records total as the count at off, a multiple of markEvery. A mark
// that does not follow the last one (the model skipped bytes, or started
// again) begins a new run.
func (s *scrollMarks) note(off uint64) {
	i := off / markEvery
	if s.ring == nil {
		s.ring = make([]uint64, marksKept)
	}
	if s.n == 0 || i != s.next {
		s.n = 0
	}
	s.ring[i%marksKept] = s.total
	s.next = i + 1
	s.n = min(s.n+1, marksKept)
}

// at returns the count at off, if off is a multiple of markEvery whose
// mark is still held.
func (s *scrollMarks) at(off uint64) (uint64, bool) {
	if off%markEvery != 0 || s.n == 0 {
		return 0, false
	}
	i := off / markEvery
	if i >= s.next || i < s.next-uint64(s.n) {
		return 0, false
	}
	return s.ring[i%marksKept], true
}

// forget drops the marks (a frozen model's: a quiet session has no viewer
// far behind).
func (s *scrollMarks) forget() { s.ring, s.n = nil, 0 }

// nextMark is the first offset at or after off that may carry a mark.
func nextMark(off uint64) uint64 { return (off + markEvery - 1) / markEvery * markEvery }

// resyncSnapshot is Snapshot for a viewer that has drawn the output below
// had (a multiple of markEvery, or else it gets the history it asks for):
// a SnapshotKeep of the screen (and its size) at an offset at least least, with the lines
// that scrolled away after had, at most limit of them.
func (h *Host) resyncSnapshot(ctx context.Context, least, had uint64, limit int) (data []byte, off uint64, cols, rows uint16, err error) {
	m := h.startModel()
	err = m.at(ctx, least, func(scr *screen.Screen, at uint64) {
		k := max(limit, 0)
		if then, ok := m.marks.at(had); ok && m.marks.total >= then {
			k = int(min(uint64(k), m.marks.total-then))
		}
		data, off = scr.SnapshotKeep(k), at
		c, r := scr.Size()
		cols, rows = uint16(c), uint16(r)
	})
	return data, off, cols, rows, err
}
