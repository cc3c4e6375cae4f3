package replay

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/screen"
)

// recording writes a session's log as a holder does, with a clock of its
// own, and feeds the same bytes from the start to a reference screen, the
// way the server's screen model does: what Render must reproduce.
type recording struct {
	t   testing.TB
	dir string // the session directory
	l   *outlog.Log
	now time.Time
	ref *screen.Screen
	// want holds the reference's snapshot after some steps, by offset:
	// one step in every, and those on either side of a checkpoint.
	want     map[uint64]noted
	every    int
	steps    int
	noteNext bool
}

// wantHistory is the history compared: less than a checkpoint keeps.
const wantHistory = 200

func newRecording(t testing.TB, cols, rows uint16, opts outlog.Options) *recording {
	t.Helper()
	r := &recording{t: t, dir: t.TempDir(), now: time.Unix(1_763_700_000, 0), want: map[uint64]noted{}, every: 25}
	opts.Cols, opts.Rows, opts.Sync = cols, rows, outlog.SyncNever
	opts.TimeEvery = 100 * time.Millisecond
	opts.Now = func() time.Time { return r.now }
	l, err := outlog.Open(filepath.Join(r.dir, "log"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	r.l = l
	r.ref = screen.New(int(cols), int(rows), screen.Options{})
	r.note()
	return r
}

// tick moves the clock on.
func (r *recording) tick(d time.Duration) { r.now = r.now.Add(d) }

// write logs p as output 30 ms after the previous write.
func (r *recording) write(p string) {
	r.t.Helper()
	r.tick(30 * time.Millisecond)
	if _, err := r.l.Append([]byte(p)); err != nil {
		r.t.Fatal(err)
	}
	r.ref.Write([]byte(p))
	r.note()
}

// mark logs p as bytes termkeep wrote (a restore's banner).
func (r *recording) mark(p string) {
	r.t.Helper()
	r.tick(30 * time.Millisecond)
	if _, err := r.l.AppendMark([]byte(p)); err != nil {
		r.t.Fatal(err)
	}
	r.ref.Write([]byte(p))
	r.note()
}

func (r *recording) resize(cols, rows uint16) {
	r.t.Helper()
	if err := r.l.SetSize(cols, rows); err != nil {
		r.t.Fatal(err)
	}
	r.ref.Resize(int(cols), int(rows))
	// Always noted: the snapshot noted at this offset before is not the
	// screen there any more (a size change at X is in force at X).
	r.noteNext = true
	r.note()
}

// gap records n bytes that were never logged; the reference shows the
// line export shows.
func (r *recording) gap(n uint64, reason string) {
	r.t.Helper()
	if err := r.l.Skip(r.l.End()+n, reason); err != nil {
		r.t.Fatal(err)
	}
	r.ref.Write(fmt.Appendf(nil, "\x18\r\n[termkeep: %d bytes not logged (%s)]\r\n", n, reason))
	r.note()
}

// checkpoint saves a replay checkpoint of the reference, as the screen
// model does.
func (r *recording) checkpoint() uint64 {
	r.t.Helper()
	data, err := r.ref.MarshalBinary()
	if err != nil {
		r.t.Fatal(err)
	}
	off := r.l.End()
	if err := SaveCheckpoint(r.dir, off, data, r.l.First()); err != nil {
		r.t.Fatal(err)
	}
	r.want[off] = noteOf(r.ref)
	r.noteNext = true
	return off
}

// note keeps the reference's snapshot after a step, now and then.
func (r *recording) note() {
	if r.steps%r.every == 0 || r.noteNext {
		r.want[r.l.End()] = noteOf(r.ref)
		r.noteNext = false
	}
	r.steps++
}

// noted is a screen as the comparison sees it: what a terminal shows of
// it (cells with their styles, wantHistory lines of history, cursor,
// modes, title), as a dump.
//
// Not the saved cursor: a checkpoint keeps 1,000 lines of history and from
// then on behaves as a screen whose history is full, as a long session's
// is. Where the server's model has between 1,000 and 10,000 lines, its
// history still grows, and a cursor saved (DECSC, or entering the
// alternate screen) before the output scrolled points at another row than
// the replay's. Only a later restore without a save would show it.
type noted struct{ dump screen.Dump }

func noteOf(s *screen.Screen) noted { return noted{s.Dump(wantHistory)} }

// check renders every offset the reference was noted at and compares.
func (r *recording) check() {
	r.t.Helper()
	for off, want := range r.want {
		if off < r.l.First() {
			continue
		}
		m, err := Render(r.l, r.dir, off)
		if err != nil {
			r.t.Fatalf("Render(%d): %v", off, err)
		}
		if m.Offset != off {
			r.t.Fatalf("Render(%d) is at %d", off, m.Offset)
		}
		got := noteOf(m.Screen)
		if d := screen.Diff(&want.dump, &got.dump, 10); d != nil {
			r.t.Fatalf("Render(%d) differs from the screen fed from the start:\n  %s", off, strings.Join(d, "\n  "))
		}
	}
}
