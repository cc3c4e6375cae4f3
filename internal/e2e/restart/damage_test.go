package restart_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// garbleLog writes n bytes of garbage at byte at of the session's log
// segment seg (its index among the segments, oldest first).
func garbleLog(t *testing.T, e *e2e.Env, id string, seg int, at int64, n int) string {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(e.Dir, "sessions", id, sessiondir.LogDir, "*.seg"))
	if len(segs) <= seg {
		t.Fatalf("%d segments, want more than %d", len(segs), seg)
	}
	f, err := os.OpenFile(segs[seg], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(at), uint64(n)))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
	return segs[seg]
}

var (
	captureGap = regexp.MustCompile(`bytes (\d+)-(\d+) are lost to damage`)
	exportGap  = regexp.MustCompile(`bytes (\d+)-(\d+) lost to a damaged log segment`)
)

// oneGap finds the single damaged range a CLI's stderr names.
func oneGap(t *testing.T, what string, re *regexp.Regexp, stderr string) (uint64, uint64) {
	t.Helper()
	m := re.FindAllStringSubmatch(stderr, -1)
	if len(m) != 1 {
		t.Fatalf("%s names %d damaged ranges, want 1: %q", what, len(m), stderr)
	}
	lo, _ := strconv.ParseUint(m[0][1], 10, 64)
	hi, _ := strconv.ParseUint(m[0][2], 10, 64)
	if lo >= hi {
		t.Fatalf("%s: damaged range %d-%d", what, lo, hi)
	}
	return lo, hi
}

// viewFrom0 attaches as a reader from offset 0 until end, returning the
// bytes and the gaps the server sent, each checked to start where the
// stream was.
func viewFrom0(t *testing.T, e *e2e.Env, id string, end uint64) ([]byte, [][2]uint64) {
	t.Helper()
	v := e2e.OpenViewer(t, e, id, wire.Hello{Role: wire.RoleWaiter, From: 0})
	var got []byte
	var gaps [][2]uint64
	next := uint64(0)
	v.Until(fmt.Sprintf("the stream to reach %d", end), func(f wire.Frame) bool {
		switch f.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(f.Payload)
			if off != next {
				t.Fatalf("output at %d, want %d", off, next)
			}
			got = append(got, data...)
			next += uint64(len(data))
		case wire.TypeGap:
			from, to, _ := wire.ParseGap(f.Payload)
			if from != next {
				t.Fatalf("gap %d-%d at %d", from, to, next)
			}
			gaps = append(gaps, [2]uint64{from, to})
			next = to
		}
		return next >= end
	})
	return got, gaps
}

// Garbage written over the only segment of a running session's log while
// the server was down is a marked gap of the records it hit, and nothing
// more: capture --raw, capture, export -f raw and a viewer all read the
// bytes on either side, at the offsets the session gave them.
func TestDamagedLiveSegment(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	// Short lines, a record each: 80 bytes of garbage hit headers.
	id := strings.TrimSpace(e.MustTk("new", "--name", "damaged", "--", "sh", "-c",
		`i=0; while [ $i -lt 150 ]; do i=$((i+1)); echo before-$i; sleep 0.005; done; exec cat`))
	e.MustTk("wait", id, "--from", "start", "--output", "before-150", "--timeout", "30s")
	before, _, code := e.Tk("capture", "--raw", id)
	if code != 0 || !strings.Contains(before, "before-150") {
		t.Fatalf("capture --raw before the damage: exit %d, %d bytes", code, len(before))
	}
	e.ShutdownServer()
	garbleLog(t, e, id, 0, 1000, 80)

	e.StartServer()
	e.MustTk("send", id, "after-the-damage")
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "after-the-damage", "--timeout", "30s"); code != 0 {
		t.Fatalf("wait after the damage: exit %d: %s", code, errs)
	}
	// The terminal's echo comes first, cat's copy after it: the session
	// prints nothing more once both are in.
	e2e.WaitFor(t, 30*time.Second, "cat's copy of the line", func() bool {
		raw, _, _ := e.Tk("capture", "--raw", id)
		return strings.Count(raw, "after-the-damage") == 2
	})
	end := e.Session(id).End

	raw, errs, code := e.Tk("capture", "--raw", id)
	if code != 0 {
		t.Fatalf("capture --raw: exit %d: %s", code, errs)
	}
	lo, hi := oneGap(t, "capture --raw", captureGap, errs)
	if lo > 1000 || hi-lo > 200 || hi > uint64(len(before)) {
		t.Fatalf("capture --raw skips %d-%d: more than the records 80 bytes at byte 1000 hit", lo, hi)
	}
	// Every byte but the damaged ones, at its place: what came before
	// the damage, what followed it, what came after the restart.
	want := before[:lo] + before[hi:]
	if !strings.HasPrefix(raw, want) || !strings.Contains(raw[len(want):], "after-the-damage") {
		t.Fatalf("capture --raw: %d bytes, not the %d before the damage less %d-%d and then the new output", len(raw), len(before), lo, hi)
	}
	if uint64(len(raw))+hi-lo != end {
		t.Fatalf("capture --raw: %d bytes and a %d-byte gap, the session is at %d", len(raw), hi-lo, end)
	}
	t.Logf("capture --raw: %d of %d bytes, gap %d-%d", len(raw), end, lo, hi)

	screen, errs, code := e.Tk("capture", id)
	if code != 0 || !strings.Contains(screen, "after-the-damage") {
		t.Fatalf("capture: exit %d: %s%s", code, errs, screen)
	}

	file := filepath.Join(t.TempDir(), "raw")
	if _, errs, code := e.Tk("export", id, "-f", "raw", "-o", file); code != 0 {
		t.Fatalf("export -f raw: exit %d: %s", code, errs)
	} else if elo, ehi := oneGap(t, "export -f raw", exportGap, errs); elo != lo || ehi != hi {
		t.Fatalf("export -f raw skips %d-%d, capture --raw %d-%d", elo, ehi, lo, hi)
	}
	if b, _ := os.ReadFile(file); string(b) != raw {
		t.Fatalf("export -f raw: %d bytes, capture --raw %d", len(b), len(raw))
	}

	got, gaps := viewFrom0(t, e, id, end)
	if len(gaps) != 1 || gaps[0] != [2]uint64{lo, hi} || string(got) != raw {
		t.Fatalf("a viewer got %d bytes and gaps %v; capture --raw %d bytes, gap %d-%d", len(got), gaps, len(raw), lo, hi)
	}

	// grep and replay find a line after the damage at its offset.
	at := strings.Index(before, "before-149")
	if at < int(hi) {
		t.Fatalf("before-149 at %d, inside or before the damage %d-%d", at, lo, hi)
	}
	out, errs, code := e.Tk("grep", id, "before-149")
	if code != 0 || !strings.HasPrefix(out, strconv.Itoa(at)+" ") {
		t.Fatalf("grep before-149 (at %d): exit %d: %s%s", at, code, errs, out)
	}
	replayed, errs, code := e.Tk("capture", id, "--at", strconv.FormatUint(end, 10))
	if code != 0 || !strings.Contains(replayed, "after-the-damage") || !strings.Contains(replayed, "before-149") {
		t.Fatalf("capture --at %d: exit %d: %s%s", end, code, errs, replayed)
	}
}

// Garbage over a middle segment of five costs the records it hit:
// capture --raw skips them as export -f raw and a viewer do, and goes on.
func TestDamagedMiddleSegment(t *testing.T) {
	e := e2e.NewEnv(t)
	// 2 MiB of retention: 128 KiB segments.
	e.ServerEnv = []string{"TERMKEEP_LOG_RETENTION=2MiB"}
	e.StartServer()
	const n = 600 << 10
	id := e.NewWriter("segments", 5, n, 0, false)
	if _, errs, code := e.Tk("wait", id, "--exit", "--timeout", "60s"); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
	e.ShutdownServer()
	seg := garbleLog(t, e, id, 1, 60<<10, 100)
	segLo, _ := strconv.ParseUint(strings.TrimSuffix(filepath.Base(seg), ".seg"), 10, 64)
	e.StartServer()

	raw, errs, code := e.Tk("capture", "--raw", id)
	if code != 0 {
		t.Fatalf("capture --raw: exit %d: %s", code, errs)
	}
	lo, hi := oneGap(t, "capture --raw", captureGap, errs)
	if lo < segLo || hi-lo > 64<<10+100 {
		t.Fatalf("capture --raw skips %d-%d; the damaged segment starts at %d", lo, hi, segLo)
	}
	pattern := e2e.Pattern(5, n)
	want := string(pattern[:lo]) + string(pattern[hi:])
	if raw != want {
		t.Fatalf("capture --raw: %d bytes, want the %d of the output less %d-%d", len(raw), n, lo, hi)
	}
	t.Logf("capture --raw: %d of %d bytes, gap %d-%d", len(raw), n, lo, hi)

	file := filepath.Join(t.TempDir(), "raw")
	if _, errs, code := e.Tk("export", id, "-f", "raw", "-o", file); code != 0 {
		t.Fatalf("export -f raw: exit %d: %s", code, errs)
	} else if elo, ehi := oneGap(t, "export -f raw", exportGap, errs); elo != lo || ehi != hi {
		t.Fatalf("export -f raw skips %d-%d, capture --raw %d-%d", elo, ehi, lo, hi)
	}
	if b, _ := os.ReadFile(file); string(b) != raw {
		t.Fatalf("export -f raw: %d bytes, capture --raw %d", len(b), len(raw))
	}
	got, gaps := viewFrom0(t, e, id, n)
	if len(gaps) != 1 || gaps[0] != [2]uint64{lo, hi} || string(got) != raw {
		t.Fatalf("a viewer got %d bytes and gaps %v; capture --raw %d bytes, gap %d-%d", len(got), gaps, len(raw), lo, hi)
	}
}
