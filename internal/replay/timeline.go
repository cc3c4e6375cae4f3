package replay

import (
	"fmt"
	"sync"
	"time"

	"termkeep/internal/outlog"
)

// Bounds of a timeline.
const (
	MaxPoints  = 4096   // points in a Timeline, evenly thinned
	MaxMarkers = 10_000 // markers in a Timeline, the newest
)

// MarkerKind says what a Marker marks.
type MarkerKind string

const (
	KindCommand MarkerKind = "command" // OSC 133 C: a command starts; Label is its command line
	KindDone    MarkerKind = "done"    // OSC 133 D: it ended; Status is its exit status
	KindRestore MarkerKind = "restore" // a mark record (a restore's banner); Label is its text
	KindGap     MarkerKind = "gap"     // bytes that cannot be read, up to End; Label says why
	KindClock   MarkerKind = "clock"   // the wall clock was set back or forward here; Label says by how much
)

// Marker is a moment of the log worth jumping to.
type Marker struct {
	Kind   MarkerKind
	Offset uint64    // of its first byte (a mark's ESC, a record's or gap's start)
	Time   time.Time // when it was logged
	Label  string
	Status *int   // KindDone: the exit status, when the mark carries one
	End    uint64 // KindGap: the first offset after the lost bytes
}

// Point is an entry of the log's time index: the byte at Offset was
// logged at Time (a Time record's), and so were those after it up to the
// next point.
type Point struct {
	Offset uint64
	Time   time.Time
}

// Timeline describes a log for a player.
type Timeline struct {
	First, End  uint64    // the retained range [First, End)
	Start, Last time.Time // when First and the newest byte were logged; zero for an empty log
	Cols, Rows  uint16    // the size in force at First
	Points      []Point   // ascending in offset and time, at most MaxPoints, the first and last kept
	Markers     []Marker  // ascending in offset, at most MaxMarkers (the newest)
}

// Index keeps a session's timeline: it scans the log once and then, at
// each Timeline, only the bytes logged since (or from First again when
// retention dropped bytes it had not scanned). It holds at most twice
// MaxPoints points and about MaxMarkers markers, whatever the log's size.
// It is safe for concurrent use; a scan holds it.
type Index struct {
	mu sync.Mutex // guards st; held for a whole scan
	st scan
}

// scan is what an Index knows of the log.
type scan struct {
	valid   bool // pos is where the last scan stopped
	pos     uint64
	points  []Point
	last    time.Time // the newest time seen
	markers []Marker
	marks   marks
	steps   outlog.ClockSteps
	// banner reads the text of the mark record being scanned, which
	// continues while its chunks follow each other up to bannerEnd.
	banner    *marks
	bannerEnd uint64
}

// Timeline scans what l logged since the last call and describes [First,
// End) of it.
func (ix *Index) Timeline(l Log) (Timeline, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st := &ix.st
	first, end := l.First(), l.End()
	if !st.valid || st.pos < first || st.pos > end {
		// The first scan; or retention dropped bytes not scanned yet; or
		// the log is shorter than scanned (a torn tail was cut).
		*st = scan{valid: true, pos: first}
	}
	st.marks.emit = st.add
	if err := l.Chunks(st.pos, end, st.chunk); err != nil {
		st.valid = false // the scanner's state is not that of pos
		return Timeline{}, fmt.Errorf("replay: scan the log: %w", err)
	}
	st.pos = end
	st.prune(first)
	cols, rows, err := l.SizeAt(first)
	if err != nil {
		return Timeline{}, fmt.Errorf("replay: size at %d: %w", first, err)
	}
	tl := Timeline{First: first, End: end, Last: st.last, Cols: cols, Rows: rows}
	if first < end {
		if tl.Start, err = TimeOf(l, first); err != nil {
			return Timeline{}, err
		}
	}
	if tl.Start.IsZero() && len(st.points) > 0 {
		tl.Start = st.points[0].Time
	}
	tl.Points = st.pointsFrom(first, tl.Start)
	tl.Markers = st.markersFrom(tl.Start)
	return tl, nil
}

// chunk is the scan's step.
func (st *scan) chunk(c outlog.Chunk) error {
	if d, ok := st.steps.Step(c); ok {
		st.add(Marker{Kind: KindClock, Offset: c.Offset, Time: c.Time, Label: outlog.ClockStepLabel(d)})
	}
	switch c.Kind {
	case outlog.ChunkData:
		st.point(c.Offset, c.Time)
		if c.Mark {
			st.markChunk(c)
		} else {
			st.banner = nil
			st.marks.write(c.Offset, c.Time, c.Data)
		}
	case outlog.ChunkGap:
		st.banner = nil
		st.marks.reset()
		st.add(Marker{Kind: KindGap, Offset: c.Offset, End: c.End, Time: c.Time, Label: outlog.GapOf(c).Reason})
	}
	return nil
}

// point records that the bytes from off on were logged at t. Times are log
// times, which a clock set back does not take back (outlog); those that go
// back all the same (a log written before log times were) are left out:
// the points stay ascending.
func (st *scan) point(off uint64, t time.Time) {
	if t.IsZero() || !t.After(st.last) {
		return
	}
	st.last = t
	st.points = append(st.points, Point{off, t})
	if len(st.points) > 2*MaxPoints {
		st.points = halve(st.points)
	}
}

// markChunk reads a chunk of a mark record: a restore marker, whose label
// grows while the record's chunks follow each other.
func (st *scan) markChunk(c outlog.Chunk) {
	if st.banner == nil || st.bannerEnd != c.Offset {
		// A new process follows: no command line continues across it.
		st.marks.reset()
		st.banner = &marks{text: true}
		st.add(Marker{Kind: KindRestore, Offset: c.Offset, Time: c.Time})
	}
	st.banner.write(c.Offset, c.Time, c.Data)
	st.markers[len(st.markers)-1].Label = st.banner.label()
	st.bannerEnd = c.Offset + uint64(len(c.Data))
}

// add records a marker, dropping the oldest ones (a quarter of the bound
// at a time) beyond MaxMarkers.
func (st *scan) add(m Marker) {
	st.markers = append(st.markers, m)
	if len(st.markers) > MaxMarkers+MaxMarkers/4 {
		n := copy(st.markers, st.markers[len(st.markers)-MaxMarkers:])
		clear(st.markers[n:])
		st.markers = st.markers[:n]
	}
}

// prune drops what is below first.
func (st *scan) prune(first uint64) {
	i := 0
	for i < len(st.points) && st.points[i].Offset < first {
		i++
	}
	st.points = st.points[i:]
	j := 0
	for j < len(st.markers) && st.markers[j].Offset < first {
		j++
	}
	st.markers = st.markers[j:]
}

// pointsFrom returns the points, beginning with one at first (logged at
// start, when known), evenly thinned to MaxPoints.
func (st *scan) pointsFrom(first uint64, start time.Time) []Point {
	pts := st.points
	if !start.IsZero() && (len(pts) == 0 || pts[0].Offset > first) {
		pts = append([]Point{{first, start}}, pts...)
	}
	return even(pts, MaxPoints)
}

// markersFrom returns a copy of the newest MaxMarkers markers, those
// logged before any Time record given start, the time of First.
func (st *scan) markersFrom(start time.Time) []Marker {
	ms := st.markers[max(len(st.markers)-MaxMarkers, 0):]
	out := make([]Marker, len(ms))
	copy(out, ms)
	for i := range out {
		if out[i].Time.IsZero() {
			out[i].Time = start
		}
	}
	return out
}

// halve keeps every other point, and the last, in place.
func halve(ps []Point) []Point {
	n := 0
	for i := 0; i < len(ps); i += 2 {
		ps[n] = ps[i]
		n++
	}
	if (len(ps)-1)%2 != 0 {
		ps[n] = ps[len(ps)-1]
		n++
	}
	return ps[:n]
}

// even returns at most n of ps (n >= 2), evenly spaced by index, the first
// and the last among them, in a new slice.
func even(ps []Point, n int) []Point {
	if len(ps) <= n {
		return append([]Point(nil), ps...)
	}
	out := make([]Point, n)
	for j := range out {
		out[j] = ps[j*(len(ps)-1)/(n-1)]
	}
	return out
}
