package replay

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
)

// A prompt as termkeep's bash integration draws it.
const (
	promptA = "\x1b]133;A\x07"
	promptB = "\x1b]133;B\x07"
	markC   = "\x1b]133;C\x07"
)

// kinds renders markers as "kind@offset label/status" for comparison.
func kinds(ms []Marker) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%s@%d", m.Kind, m.Offset)
		if m.Label != "" {
			fmt.Fprintf(&b, " %q", m.Label)
		}
		if m.Status != nil {
			fmt.Fprintf(&b, " status=%d", *m.Status)
		}
		if m.Kind == KindGap {
			fmt.Fprintf(&b, " end=%d", m.End)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Markers at commands (with the command line typed, edits applied), at
// their ends (with the status), at a restore's banner and at a gap, with
// every OSC 133 sequence split across two chunks somewhere.
func TestTimelineMarkers(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{})
	r.write("\x1b]7;file://host/tmp\x1b\\" + promptA + "$ " + promptB)
	r.write("make tes")
	r.write("x\b \bt") // a typo erased
	cAt := r.l.End() + 2
	r.write("\r\n\x1b]13") // the C mark split after "13"
	r.write("3;C\x07build output\r\n")
	dAt := r.l.End()
	r.write("\x1b]133;D;") // the D mark split before its status
	r.write("2\x07" + promptA + "$ " + promptB)
	r.write("\x1b[1mls\x1b[m -l ") // escape sequences in the command line
	c2At := r.l.End()
	r.write("\r\n" + markC[:1])
	r.write(markC[1:] + "total 0\r\n\x1b]133;D\x1b\\") // ST ends it; no status
	d2At := r.l.End() - 9
	restoreAt := r.l.End()
	r.mark("\x1b[?1049l\r\n\x1b[2m── restored after reboot at 14:02 ──\x1b[m")
	r.mark("\r\nnotice: \x1b[1mhere\x1b[m\r\n")
	gapAt := r.l.End()
	r.gap(100, "disk full")
	r.write(promptA + "$ " + promptB + "echo \xe4\xb8")
	c3At := r.l.End() + 3
	r.write("\xad\r\n" + markC + "done\r\n")
	// A command line with no B before it: no label.
	c4At := r.l.End()
	r.write(markC)

	var ix Index
	tl, err := ix.Timeline(r.l)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("command@%d \"make test\"\ndone@%d status=2\ncommand@%d \"ls -l\"\ndone@%d\n"+
		"restore@%d \"── restored after reboot at 14:02 ── notice: here\"\ngap@%d \"not logged (disk full)\" end=%d\n"+
		"command@%d \"echo 中\"\ncommand@%d\n",
		cAt, dAt, c2At+2, d2At, restoreAt, gapAt, gapAt+100, c3At, c4At)
	if got := kinds(tl.Markers); got != want {
		t.Fatalf("markers:\n%s\nwant:\n%s", got, want)
	}
	for _, m := range tl.Markers {
		if m.Time.IsZero() {
			t.Errorf("marker %s@%d has no time", m.Kind, m.Offset)
		}
	}
	if tl.First != 0 || tl.End != r.l.End() || tl.Cols != 80 || tl.Rows != 24 {
		t.Errorf("timeline %d-%d %dx%d", tl.First, tl.End, tl.Cols, tl.Rows)
	}
	// The last write's time is its Time record's, at most 100 ms before.
	if tl.Last.After(r.now) || r.now.Sub(tl.Last) >= 100*time.Millisecond {
		t.Errorf("last %v, want within 100 ms before %v", tl.Last, r.now)
	}
}

// countingLog counts the data bytes a scan reads.
type countingLog struct {
	*outlog.Log
	read uint64
}

func (c *countingLog) Chunks(lo, hi uint64, fn func(outlog.Chunk) error) error {
	return c.Log.Chunks(lo, hi, func(ch outlog.Chunk) error {
		c.read += uint64(len(ch.Data))
		return fn(ch)
	})
}

// A second timeline scans only what was logged since the first (and the
// oldest byte again, for its time), and a mark split between the two
// scans is found.
func TestTimelineScansOnlyNewBytes(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{})
	for i := range 200 {
		r.write(fmt.Sprintf("line %d\r\n", i))
	}
	r.write(promptA + "$ " + promptB + "tru")
	l := &countingLog{Log: r.l}
	var ix Index
	if _, err := ix.Timeline(l); err != nil {
		t.Fatal(err)
	}
	if l.read != r.l.End()+1 {
		t.Fatalf("the first scan read %d bytes, want the %d of the log and the oldest again", l.read, r.l.End())
	}
	before := r.l.End()
	r.write("e\r\n\x1b]133")
	ix.Timeline(l)
	r.write(";C\x07")
	l.read = 0
	tl, err := ix.Timeline(l)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(len(";C\x07") + 1); l.read != want {
		t.Fatalf("the last scan read %d bytes, want %d", l.read, want)
	}
	if got, want := kinds(tl.Markers), fmt.Sprintf("command@%d \"true\"\n", before+3); got != want {
		t.Fatalf("markers %q, want %q", got, want)
	}
}

// Points are the log's Time records, ascending, thinned evenly to
// MaxPoints with the first (at First) and the last kept; after retention
// they begin at the new First.
func TestTimelinePoints(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{Retention: 1 << 20, SegmentSize: 64 << 10})
	start := r.now.Add(200 * time.Millisecond) // the first write's
	n := 3*MaxPoints + 17
	var ix Index
	for i := range n {
		r.tick(200 * time.Millisecond) // each write gets a Time record
		if _, err := r.l.Append(fmt.Appendf(nil, "%d\r\n", i)); err != nil {
			t.Fatal(err)
		}
		if i == MaxPoints {
			ix.Timeline(r.l) // part of the scan now, the rest later
		}
	}
	tl, err := ix.Timeline(r.l)
	if err != nil {
		t.Fatal(err)
	}
	ps := tl.Points
	if len(ps) > MaxPoints || len(ps) < MaxPoints/2 {
		t.Fatalf("%d points, want at most %d (and not far fewer)", len(ps), MaxPoints)
	}
	if ps[0].Offset != 0 || !tl.Start.Equal(start) || !ps[0].Time.Equal(start) {
		t.Errorf("first point %v, start %v, want offset 0 at %v", ps[0], tl.Start, start)
	}
	if last := ps[len(ps)-1]; !last.Time.Equal(r.now) || !tl.Last.Equal(r.now) {
		t.Errorf("last point %v, last %v, want %v", last, tl.Last, r.now)
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].Offset <= ps[i-1].Offset || !ps[i].Time.After(ps[i-1].Time) {
			t.Fatalf("points %d and %d not ascending: %v %v", i-1, i, ps[i-1], ps[i])
		}
	}

	// Retention: the points start at the new First, at its time.
	for i := range 100_000 {
		r.tick(time.Millisecond)
		r.l.Append(fmt.Appendf(nil, "more output, line %d\r\n", i))
	}
	first := r.l.First()
	if first == 0 {
		t.Fatal("retention dropped nothing")
	}
	tl, err = ix.Timeline(r.l)
	if err != nil {
		t.Fatal(err)
	}
	if tl.First != first || tl.Points[0].Offset != first || !tl.Points[0].Time.Equal(tl.Start) {
		t.Fatalf("after retention: first %d, points from %v, start %v", tl.First, tl.Points[0], tl.Start)
	}
	want, err := TimeOf(r.l, first)
	if err != nil || !tl.Start.Equal(want) {
		t.Fatalf("start %v, want the time of the oldest byte %v (%v)", tl.Start, want, err)
	}
}

// An empty log has an empty timeline.
func TestTimelineEmpty(t *testing.T) {
	r := newRecording(t, 100, 40, outlog.Options{})
	var ix Index
	tl, err := ix.Timeline(r.l)
	if err != nil {
		t.Fatal(err)
	}
	if tl.End != 0 || len(tl.Points) != 0 || len(tl.Markers) != 0 || tl.Cols != 100 || tl.Rows != 40 {
		t.Fatalf("timeline of an empty log: %+v", tl)
	}
}

// The markers kept are the newest MaxMarkers.
func TestTimelineKeepsTheNewestMarkers(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{Retention: 64 << 20})
	var b strings.Builder
	for i := range MaxMarkers + 500 {
		fmt.Fprintf(&b, "%s$ %scmd %d\r\n%s", promptA, promptB, i, markC)
	}
	r.write(b.String())
	var ix Index
	tl, err := ix.Timeline(r.l)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Markers) != MaxMarkers {
		t.Fatalf("%d markers, want %d", len(tl.Markers), MaxMarkers)
	}
	if first, last := tl.Markers[0].Label, tl.Markers[len(tl.Markers)-1].Label; first != "cmd 500" || last != fmt.Sprintf("cmd %d", MaxMarkers+499) {
		t.Fatalf("markers from %q to %q", first, last)
	}
}

// The cache of indexes keeps the most recently used ones.
func TestIndexes(t *testing.T) {
	x := NewIndexes(2)
	a, b := x.Get("a"), x.Get("b")
	if x.Get("a") != a {
		t.Fatal("a was not kept")
	}
	x.Get("c") // evicts b, the least recently used
	if x.Get("a") != a {
		t.Fatal("a was evicted")
	}
	if x.Get("b") == b {
		t.Fatal("b was kept beyond the bound")
	}
	x.Forget("a")
	if x.Get("a") == a {
		t.Fatal("a was not forgotten")
	}
}
