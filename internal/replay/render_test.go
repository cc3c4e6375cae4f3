package replay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/screen"
)

// session writes a varied session into r, with replay checkpoints along
// the way: more history than a checkpoint keeps, colors, size changes, a
// full-screen program with a title, a gap, and a checkpoint in the middle
// of an escape sequence and of a UTF-8 character.
func session(r *recording) (ckpts []uint64) {
	for i := range 1100 {
		r.write(fmt.Sprintf("\x1b[3%dmline %04d\x1b[m %s\r\n", i%8, i, strings.Repeat("=", i%70)))
	}
	ckpts = append(ckpts, r.checkpoint())
	r.resize(100, 30)
	for i := range 50 {
		r.write(fmt.Sprintf("wide line %d %s\r\n", i, strings.Repeat("-", 90)))
	}
	ckpts = append(ckpts, r.checkpoint())
	// A full-screen program: alternate screen, title, cursor addressing,
	// a saved cursor restored without scrolling in between.
	r.write("\x1b7\x1b[?1049h\x1b]2;top - the title\x07\x1b[H\x1b[2J")
	for y := 1; y <= 30; y++ {
		r.write(fmt.Sprintf("\x1b[%d;1H\x1b[44m%-20s\x1b[m row %d", y, fmt.Sprint("cell ", y), y))
	}
	ckpts = append(ckpts, r.checkpoint())
	r.gap(1234, "disk full")
	r.write("\x1b[5;5Hafter the gap")
	// Split: an SGR sequence and a character, with a checkpoint between
	// the halves of each.
	r.write("\x1b[1;3")
	ckpts = append(ckpts, r.checkpoint())
	r.write("1mred\xe4\xb8")
	ckpts = append(ckpts, r.checkpoint())
	r.write("\xadbold\x1b[m\x1b[?1049l\x1b8")
	r.resize(60, 20)
	for i := range 40 {
		r.write(fmt.Sprintf("narrow %d, a line long enough to wrap at sixty columns: %s\r\n", i, strings.Repeat("x", 30)))
	}
	ckpts = append(ckpts, r.checkpoint())
	r.write("$ the end")
	return ckpts
}

// Rendering any offset equals the screen fed every byte from the start,
// whichever checkpoint the render starts from.
func TestRenderEqualsTheStreamFromTheStart(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{})
	ckpts := session(r)
	if got, _ := Checkpoints(r.dir); len(got) != len(ckpts) {
		t.Fatalf("checkpoints %v, want %v", got, ckpts)
	}
	r.check()
}

// With no checkpoint at all, a render starts from the oldest byte.
func TestRenderWithoutCheckpoints(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{})
	session(r)
	os.RemoveAll(filepath.Join(r.dir, Dir))
	r.check()
}

// A checkpoint that cannot be read, or whose name and content disagree, is
// passed over for the one before it.
func TestRenderPassesOverBadCheckpoints(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{})
	ckpts := session(r)
	last := checkpointPath(r.dir, ckpts[len(ckpts)-1])
	if err := os.WriteFile(last, []byte("torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Another checkpoint's content under the name of the one before last.
	b, err := os.ReadFile(checkpointPath(r.dir, ckpts[0]))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(checkpointPath(r.dir, ckpts[len(ckpts)-2]), b, 0o600); err != nil {
		t.Fatal(err)
	}
	r.check()
}

// After retention dropped the start of the log, a render starts from a
// checkpoint the log still has the bytes after, or from the oldest byte;
// offsets outside the log are refused.
func TestRenderAfterRetention(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{Retention: 128 << 10, SegmentSize: 64 << 10})
	for i := range 4000 {
		r.write(fmt.Sprintf("line %d %s\r\n", i, strings.Repeat("*", i%50)))
		if i%500 == 499 {
			r.checkpoint()
		}
	}
	first := r.l.First()
	if first == 0 {
		t.Fatal("retention dropped nothing")
	}
	offs, _ := Checkpoints(r.dir)
	if len(offs) == 0 || offs[0] < first {
		t.Fatalf("checkpoints %v below the oldest byte %d", offs, first)
	}
	// The render at the end starts from the newest checkpoint.
	m, err := Render(r.l, r.dir, r.l.End())
	if err != nil {
		t.Fatal(err)
	}
	want, got := r.want[r.l.End()], noteOf(m.Screen)
	if d := screen.Diff(&want.dump, &got.dump, 10); d != nil {
		t.Fatalf("render at the end differs:\n  %s", strings.Join(d, "\n  "))
	}
	for _, off := range []uint64{first - 1, r.l.End() + 1} {
		if _, err := Render(r.l, r.dir, off); !errors.Is(err, ErrRange) {
			t.Errorf("Render(%d) = %v, want ErrRange", off, err)
		}
	}
}

// A moment's time is when its last byte was logged.
func TestRenderTime(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{})
	r.tick(time.Second)
	r.write("one\r\n")
	t1 := r.now
	r.tick(time.Second)
	r.write("two\r\n")
	t2 := r.now
	mid := r.l.End()
	r.checkpoint()
	r.tick(time.Second)
	r.write("three\r\n")
	for _, tc := range []struct {
		off  uint64
		want time.Time
	}{{4, t1}, {mid, t2}, {r.l.End(), r.now}, {0, time.Time{}}} {
		m, err := Render(r.l, r.dir, tc.off)
		if err != nil {
			t.Fatal(err)
		}
		if !m.Time.Equal(tc.want) {
			t.Errorf("Render(%d).Time = %v, want %v", tc.off, m.Time, tc.want)
		}
	}
}

// A window shrunk and grown again while the program printed nothing: the
// shrink scrolled the full-screen program's rows 1-12 away, and the grow
// left rows 13-24 at the top with blank rows below. A render after it
// shows that screen, not the one before the shrink.
func TestRenderEverySize(t *testing.T) {
	r := newRecording(t, 80, 24, outlog.Options{})
	r.write("earlier output\r\n")
	r.checkpoint()
	r.write("\x1b[?1049h\x1b[H")
	for i := 1; i <= 24; i++ {
		sep := "\r\n"
		if i == 24 {
			sep = ""
		}
		r.write(fmt.Sprintf("row %02d%s", i, sep))
	}
	at := r.l.End()
	r.resize(80, 12)
	r.resize(80, 24)
	if top := r.ref.Text(0); !strings.HasPrefix(top, "row 13\n") {
		t.Fatalf("the reference's screen after the shrink and grow is %q, want row 13", top)
	}
	r.check()
	r.write("after")
	r.check()
	m, err := Render(r.l, r.dir, at)
	if err != nil {
		t.Fatal(err)
	}
	if top := m.Screen.Text(0); !strings.HasPrefix(top, "row 13\n") {
		t.Fatalf("Render(%d)'s screen is %q, want row 13", at, top)
	}
}
