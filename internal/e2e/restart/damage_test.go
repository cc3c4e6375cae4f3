package restart_test

import (
	"bytes"
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
	"termkeep/internal/outlog"
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

// exportMatches checks that export -f raw of the session has the bytes
// capture --raw printed, raw, and names the same damaged range, lo-hi.
func exportMatches(t *testing.T, e *e2e.Env, id, raw string, lo, hi uint64) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "raw")
	if _, errs, code := e.Tk("export", id, "-f", "raw", "-o", file); code != 0 {
		t.Fatalf("export -f raw: exit %d: %s", code, errs)
	} else if elo, ehi := oneGap(t, "export -f raw", exportGap, errs); elo != lo || ehi != hi {
		t.Fatalf("export -f raw skips %d-%d, capture --raw %d-%d", elo, ehi, lo, hi)
	}
	if b, _ := os.ReadFile(file); string(b) != raw {
		t.Fatalf("export -f raw: %d bytes, capture --raw %d", len(b), len(raw))
	}
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

	exportMatches(t, e, id, raw, lo, hi)

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
	id := e.NewWriter("segmented", 5, n, 0, false)
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

	exportMatches(t, e, id, raw, lo, hi)
	got, gaps := viewFrom0(t, e, id, n)
	if len(gaps) != 1 || gaps[0] != [2]uint64{lo, hi} || string(got) != raw {
		t.Fatalf("a viewer got %d bytes and gaps %v; capture --raw %d bytes, gap %d-%d", len(got), gaps, len(raw), lo, hi)
	}
}

// flipLogByte XORs the byte at position at of the session's log segment
// seg (its index, oldest first) with 0x20, as one bad bit on a disk does,
// and returns the segment's path.
func flipLogByte(t *testing.T, e *e2e.Env, id string, seg int, at int64) string {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(e.Dir, "sessions", id, sessiondir.LogDir, "*.seg"))
	if seg < 0 {
		seg += len(segs)
	}
	if seg < 0 || len(segs) <= seg {
		t.Fatalf("%d segments, want segment %d", len(segs), seg)
	}
	f, err := os.OpenFile(segs[seg], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatalf("read byte %d of %s: %v", at, segs[seg], err)
	}
	b[0] ^= 0x20
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
	return segs[seg]
}

// smallRecords are the environment of a writer child that prints its
// pattern in 100-byte pieces with a pause between them, so that its log
// holds mostly 100-byte records.
var smallRecords = []string{"--env", "TK_CHUNK=100", "--env", "TK_PAUSE=20us"}

// serverReadBuffer is what the server reads the log with for capture --raw
// (handleOutput).
const serverReadBuffer = 256 << 10

// flipAfterFullRead flips one bit in a record of the session's ended log
// (its bytes are pattern) that a reader of serverReadBuffer bytes at a
// time meets after a read that filled its buffer to within 64 bytes, in
// the same segment: there a reader once handed out the start of the next
// record unchecked, and then took the segment's next damaged record for
// the end of what it could read. Without such a read it flips a record
// 400,000 bytes into the first segment. It returns the offset of a byte
// of the record hit.
func flipAfterFullRead(t *testing.T, e *e2e.Env, id string, pattern []byte) uint64 {
	t.Helper()
	dir := filepath.Join(e.Dir, "sessions", id, sessiondir.LogDir)
	l, err := outlog.Open(dir, outlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	starts := make([]uint64, len(segs))
	for i, seg := range segs {
		starts[i], _ = strconv.ParseUint(strings.TrimSuffix(filepath.Base(seg), ".seg"), 10, 64)
	}
	segOf := func(off uint64) int {
		i := len(starts) - 1
		for i > 0 && starts[i] > off {
			i--
		}
		return i
	}
	segEnd := func(i int) uint64 {
		if i+1 < len(starts) {
			return starts[i+1]
		}
		return l.End()
	}
	from := uint64(400_000)
	c := l.Cursor(0)
	buf := make([]byte, serverReadBuffer)
	for c.Offset() < l.End() {
		p := buf[:min(uint64(len(buf)), l.End()-c.Offset())]
		n, err := c.Read(p)
		if err != nil {
			t.Fatalf("read the log at %d: %v", c.Offset(), err)
		}
		at := c.Offset()
		if n == len(p) || len(p)-n >= 64 || segEnd(segOf(at))-at < 20_000 {
			continue
		}
		// The first such read: a reader that handed out a record's start
		// read on from there in steps of its own.
		from = at
		break
	}
	c.Close()
	t.Logf("flipping a bit in the first record of 32 bytes or more after %d", from+1000)
	var hit uint64
	var near []byte
	err = l.Chunks(from+1000, l.End(), func(ch outlog.Chunk) error {
		if ch.Kind == outlog.ChunkData && len(ch.Data) >= 32 && segOf(ch.Offset) == segOf(from) && near == nil {
			hit, near = ch.Offset+16, bytes.Clone(ch.Data[:32])
		}
		return nil
	})
	if err != nil || near == nil {
		t.Fatalf("no record of 32 bytes or more after %d in its segment: %v", from, err)
	}
	if !bytes.Equal(near, pattern[hit-16:hit+16]) {
		t.Fatalf("the log at %d is not the pattern", hit-16)
	}
	b, err := os.ReadFile(segs[segOf(hit)])
	if err != nil {
		t.Fatal(err)
	}
	pos := bytes.Index(b, near)
	if pos < 0 {
		t.Fatalf("record at %d not found in %s", hit-16, segs[segOf(hit)])
	}
	flipLogByte(t, e, id, segOf(hit), int64(pos+16))
	return hit
}

// One flipped bit in an ended session's log costs capture --raw the record
// it hit and nothing else, exactly as export -f raw: before, capture --raw
// stopped there with "output cut short" (of a 9.8 MB log with a bit
// flipped 4,000,000 bytes into its first segment, 3,986,617 bytes were
// printed).
func TestFlippedByteCaptureMatchesExport(t *testing.T) {
	t.Parallel() // waits on a writer that pauses between 100-byte pieces: see e2e.Main
	e := e2e.NewEnv(t)
	// 8 MiB of retention: 512 KiB segments, each read in several parts.
	e.ServerEnv = []string{"TERMKEEP_LOG_RETENTION=8MiB"}
	e.StartServer()
	const n = 420 << 10
	id := e.NewWriter("flipped", 11, n, 0, false, smallRecords...)
	if _, errs, code := e.Tk("wait", id, "--exit", "--timeout", "90s"); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
	pattern := e2e.Pattern(11, n)
	hit := flipAfterFullRead(t, e, id, pattern)

	raw, errs, code := e.Tk("capture", "--raw", id)
	if code != 0 {
		t.Fatalf("capture --raw: exit %d, %d of %d bytes: %s", code, len(raw), n, errs)
	}
	lo, hi := oneGap(t, "capture --raw", captureGap, errs)
	if lo > hit || hit >= hi || hi-lo > 64<<10 {
		t.Fatalf("capture --raw skips %d-%d: not the one record holding byte %d", lo, hi, hit)
	}
	if want := string(pattern[:lo]) + string(pattern[hi:]); raw != want {
		t.Fatalf("capture --raw: %d bytes, want the %d of the output less %d-%d", len(raw), n, lo, hi)
	}
	exportMatches(t, e, id, raw, lo, hi)
	// An agent reading on from before the damage is told of the gap and
	// goes on after it. A server that started after the damage has none
	// of the bytes in memory: a viewer's stream reads the log.
	e.ShutdownServer()
	e.StartServer()
	m := e2e.StartMCP(t, e)
	m.Initialize()
	before := m.Tool("read_output", map[string]any{"session": id, "offset": lo - 50, "max_bytes": 4096, "raw": true})
	if next, _ := before["next_offset"].(float64); uint64(next) != lo {
		t.Fatalf("read_output from %d: next_offset %v, want %d (where the damage starts)", lo-50, before["next_offset"], lo)
	}
	after := m.Tool("read_output", map[string]any{"session": id, "offset": lo, "max_bytes": 4096, "raw": true})
	gap, _ := after["gap"].(map[string]any)
	if gap == nil || gap["from"] != float64(lo) || gap["to"] != float64(hi) || after["offset"] != float64(hi) {
		t.Fatalf("read_output from %d: %v, want the gap %d-%d and bytes from %d", lo, after, lo, hi, hi)
	}
	t.Logf("capture --raw, export -f raw and read_output: %d of %d bytes, gap %d-%d", len(raw), n, lo, hi)
}

// One flipped bit near the end of a running session's log does not stop
// capture --raw there while the session prints on: each capture has what
// came after the damage, with the damaged record named as skipped (before,
// each capture stopped at the same byte, exit 1, while the log grew).
func TestFlippedByteNearLiveTail(t *testing.T) {
	t.Parallel() // waits on a writer that pauses between 100-byte pieces: see e2e.Main
	e := e2e.NewEnv(t)
	e.ServerEnv = []string{"TERMKEEP_LOG_RETENTION=8MiB"}
	e.StartServer()
	// About 100 KB a second for a minute: it prints throughout the test.
	const n = 6 << 20
	id := e.NewWriter("live", 12, n, 0, false, smallRecords...)
	// The damage goes after the log's first 256 KiB, tens of KB from its
	// end; past 440 KB there is a record to damage after 400 KB, where
	// flipAfterFullRead flips when it finds no read of the kind it wants.
	e2e.WaitFor(t, 60*time.Second, "440 KB of output", func() bool { return e.Session(id).End > 440_000 })
	pattern := e2e.Pattern(12, n)
	hit := flipAfterFullRead(t, e, id, pattern)

	prev := 0
	var lo, hi uint64
	for i := range 3 {
		raw, errs, code := e.Tk("capture", "--raw", id)
		if code != 0 {
			t.Fatalf("capture --raw %d: exit %d, %d bytes: %s", i+1, code, len(raw), errs)
		}
		l, h := oneGap(t, "capture --raw", captureGap, errs)
		if l > hit || hit >= h || h-l > 64<<10 {
			t.Fatalf("capture --raw %d skips %d-%d: not the one record holding byte %d", i+1, l, h, hit)
		}
		lo, hi = l, h
		if len(raw) <= prev {
			t.Fatalf("capture --raw %d: %d bytes, the one before %d", i+1, len(raw), prev)
		}
		if want := string(pattern[:lo]) + string(pattern[hi:hi+uint64(len(raw))-lo]); raw != want {
			t.Fatalf("capture --raw %d: %d bytes, not the output less %d-%d", i+1, len(raw), lo, hi)
		}
		prev = len(raw)
		e2e.WaitFor(t, 30*time.Second, "the session to print 50 KB more", func() bool {
			return e.Session(id).End > uint64(prev)+hi-lo+50_000
		})
	}
	if s := e.Session(id); s.State != "running" {
		t.Fatalf("the writer is %s: the captures were not of a live log", s.State)
	}
	t.Logf("capture --raw: gap %d-%d, %d bytes at the last of three captures", lo, hi, prev)
}
