package holder

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"termkeep/internal/wire"
)

// The server connects from the start, from the middle, from the end, and
// (for live output only) from FromEnd: it gets exactly the log's bytes from
// there, then the Exit frame.
func TestForwardResume(t *testing.T) {
	const n = 300_000
	total := b64len(n)
	for _, tc := range []struct {
		name string
		from int64
		want uint64 // where the stream starts
	}{
		{"start", 0, 0},
		{"middle", int64(total / 3), total / 3},
		{"one before the end", int64(total - 1), total - 1},
		{"end", int64(total), total},
		{"live only", wire.FromEnd, total},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := startHolder(t, fmt.Sprintf("head -c %d /dev/urandom | base64 -w0; read x", n), 0)
			th.waitEnd(total)
			s, wel := th.connect(tc.from)
			if wel.First != 0 || wel.End != total || wel.Start != tc.want || wel.Cols != 80 || wel.Rows != 24 || wel.Exited {
				t.Fatalf("welcome %+v, want first 0, end %d, start %d, 80x24, running", wel, total, tc.want)
			}
			st := &stream{from: tc.want}
			s.readTo(st, total)
			if !bytes.Equal(st.data, th.logged(tc.want, total)) {
				t.Fatal("the bytes received differ from the log's")
			}
			s.w.Input([]byte("\n")) // the script ends
			s.readTo(st, total+1)
			if st.exit == nil || st.exit.State != "exited" || st.exit.End != total || *st.exit.ExitCode != 0 {
				t.Fatalf("stream ended with %+v, want exit 0 at %d (trace %v)", st.exit, total, st.trace)
			}
			if len(st.trace) != 1 {
				t.Fatalf("trace %v, want only the exit", st.trace)
			}
		})
	}
}

// A server that asks for bytes retention has deleted is told of the gap,
// then gets everything from the oldest byte kept.
func TestForwardTrimmed(t *testing.T) {
	const n = 600_000
	total := b64len(n)
	th := startHolder(t, fmt.Sprintf("head -c %d /dev/urandom | base64 -w0; read x", n), 64<<10)
	th.waitEnd(total)
	first := th.h.out.First()
	if first == 0 {
		t.Fatal("retention kept the whole log; the test needs it trimmed")
	}
	for _, from := range []int64{0, int64(first) - 1} {
		s, wel := th.connect(from)
		if wel.First != first || wel.Start != first {
			t.Fatalf("from %d: welcome %+v, want first and start %d", from, wel, first)
		}
		st := &stream{from: uint64(from)}
		s.readTo(st, total)
		if want := fmt.Sprintf("gap %d-%d", from, first); len(st.trace) != 1 || st.trace[0] != want {
			t.Fatalf("from %d: trace %v, want [%s]", from, st.trace, want)
		}
		if st.from != first || !bytes.Equal(st.data, th.logged(first, total)) {
			t.Fatalf("from %d: the bytes after the gap differ from the log's", from)
		}
	}
}

// A server that asks for an offset the session has not reached yet is
// refused with an error it can act on, and the session is untouched: the
// live connection keeps streaming.
func TestForwardFromTheFuture(t *testing.T) {
	th := startHolder(t, echoLines, 0)
	th.waitEnd(5)
	live, _ := th.connect(0)
	st := &stream{}
	live.readTo(st, 5)

	for _, from := range []int64{6, 1 << 40, 1<<63 - 1} {
		s := th.dial()
		s.w.JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: "server", From: from})
		code, msg := s.expectError(true)
		if code != wire.CodeUnavailable || !strings.Contains(msg, fmt.Sprint(from)) || !strings.Contains(msg, "beyond the end") {
			t.Fatalf("from %d: error %d %q, want unavailable naming the offset and the end", from, code, msg)
		}
	}
	live.w.Input([]byte("still\n"))
	live.readTo(st, 5+len64("<still>"))
	if got := string(st.data); got != "ready<still>" {
		t.Fatalf("the live connection got %q", got)
	}
}

// resumeAt's table, hostile offsets included.
func TestResumeAt(t *testing.T) {
	for _, tc := range []struct {
		want        int64
		first, end  uint64
		from, start uint64
		refused     bool
	}{
		{want: 0, first: 0, end: 0, from: 0, start: 0},
		{want: wire.FromEnd, first: 10, end: 100, from: 100, start: 100},
		{want: wire.FromSnapshot, first: 10, end: 100, from: 100, start: 100}, // a holder has no snapshots: live
		{want: -1 << 63, first: 0, end: 5, from: 5, start: 5},
		{want: 0, first: 10, end: 100, from: 0, start: 10},   // trimmed: a gap, then from first
		{want: 9, first: 10, end: 100, from: 9, start: 10},   // one byte trimmed
		{want: 10, first: 10, end: 100, from: 10, start: 10}, // the oldest byte kept
		{want: 50, first: 10, end: 100, from: 50, start: 50},
		{want: 100, first: 10, end: 100, from: 100, start: 100},
		{want: 101, first: 10, end: 100, refused: true}, // one byte from the future
		{want: 1<<63 - 1, first: 10, end: 100, refused: true},
		{want: 1, first: 0, end: 0, refused: true},
	} {
		from, start, err := resumeAt(tc.want, tc.first, tc.end)
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), fmt.Sprint(tc.want)) {
				t.Errorf("resumeAt(%d, %d, %d) = %d, %d, %v; want a refusal naming the offset", tc.want, tc.first, tc.end, from, start, err)
			}
			continue
		}
		if err != nil || from != tc.from || start != tc.start {
			t.Errorf("resumeAt(%d, %d, %d) = %d, %d, %v; want %d, %d", tc.want, tc.first, tc.end, from, start, err, tc.from, tc.start)
		}
	}
}

// A server that goes away mid-stream and the one that connects after it,
// from where the first got to, have between them every byte exactly once.
func TestForwardReconnectMidStream(t *testing.T) {
	const pieces, piece = 40, 75_000
	total := pieces * b64len(piece)
	th := startHolder(t, fmt.Sprintf("for i in $(seq %d); do head -c %d /dev/urandom | base64 -w0; sleep 0.02; done; read x", pieces, piece), 0)
	var got []byte
	from := int64(0)
	for _, upto := range []uint64{total / 4, total / 2, total} {
		s, wel := th.connect(from)
		if wel.Start != uint64(from) {
			t.Fatalf("welcome %+v, want start %d", wel, from)
		}
		st := &stream{from: uint64(from)}
		s.readTo(st, upto)
		if len(st.trace) != 0 {
			t.Fatalf("trace %v, want output only", st.trace)
		}
		got = append(got, st.data...)
		from = int64(st.end())
		s.c.Close() // mid-frame, as often as not: the holder must not care
	}
	if uint64(len(got)) != total || !bytes.Equal(got, th.logged(0, total)) {
		t.Fatalf("got %d bytes over three connections, want the log's %d exactly", len(got), total)
	}
}

// A server that stops reading holds the pty's reader for at most
// relayStall at a time (relay.go), so the child runs to its end; nothing
// is dropped: once the server reads again it gets every byte.
func TestForwardStalledServer(t *testing.T) {
	const n = 9_000_000 // 12 MB of output: more than relayLagMax behind
	total := b64len(n)
	th := startHolder(t, fmt.Sprintf("head -c %d /dev/urandom | base64 -w0; read x", n), 0)
	s, _ := th.connect(0)
	th.waitEnd(total) // the child was not made to wait for the server
	st := &stream{}
	s.readTo(st, total)
	if len(st.trace) != 0 || !bytes.Equal(st.data, th.logged(0, total)) {
		t.Fatalf("trace %v; the stalled server must get the log's bytes exactly", st.trace)
	}
	s.w.Input([]byte("\n"))
	s.readTo(st, total+1)
	if st.exit == nil || st.exit.End != total {
		t.Fatalf("stream ended with %+v, want exit at %d", st.exit, total)
	}
}

// frame encodes one frame by hand, as a hostile server might.
// A resize storm while output floods: every size the server sets comes
// back as a Resized frame, before the output that follows it. A resize
// recorded between the forwarder's look at the pending sizes and its read
// of the log was skipped, a few in a thousand: the read went past its
// offset. Each resize here is checked once the stream has passed the log's
// end as it was after the resize, so a lost one fails the test however
// slow the machine.
func TestForwardResizeStorm(t *testing.T) {
	th := startHolder(t, "while :; do printf 0123456789; done", 0)
	th.waitEnd(1)
	s, wel := th.connect(wire.FromEnd)
	st := &stream{from: wel.Start, discard: true}
	const storm = 1500
	for i := range storm {
		cols := uint16(100 + i%2) // each one a change
		s.w.Resize(cols, 30)
		deadline := time.Now().Add(wait)
		for {
			th.h.mu.Lock()
			applied := th.h.meta.Cols == cols
			th.h.mu.Unlock()
			if applied {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("resize %d was not applied within %v", i, wait)
			}
			time.Sleep(50 * time.Microsecond)
		}
		s.readTo(st, th.h.out.End()+1)
		if len(st.trace) != i+1 {
			t.Fatalf("after %d resizes the stream passed their offsets with %d resized frames", i+1, len(st.trace))
		}
	}
}

// nextResize's table: what the forwarder sends and reads next, with the
// hostile cases (a storm at one offset, sizes from before the stream, a
// resize just recorded at the end).
func TestNextResize(t *testing.T) {
	r := func(off uint64, cols uint16) resizeAt { return resizeAt{off: off, cols: cols, rows: 24} }
	for _, tc := range []struct {
		name     string
		pending  []resizeAt
		off, end uint64
		room     int
		rest     []resizeAt
		due      *resizeAt
		limit    int
	}{
		{"nothing pending, far behind", nil, 0, 1 << 20, 4096, nil, nil, 4096},
		{"nothing pending, near the end", nil, 100, 150, 4096, nil, nil, 50},
		{"caught up", nil, 150, 150, 4096, nil, nil, 0},
		{"a resize ahead", []resizeAt{r(120, 90)}, 100, 200, 4096, []resizeAt{r(120, 90)}, nil, 20},
		{"a resize past the room", []resizeAt{r(9000, 90)}, 100, 10000, 4096, []resizeAt{r(9000, 90)}, nil, 4096},
		{"a resize due", []resizeAt{r(100, 90), r(130, 91)}, 100, 200, 4096, []resizeAt{r(130, 91)}, &resizeAt{off: 100, cols: 90, rows: 24}, 0},
		{"a storm at one offset: one at a time, in order", []resizeAt{r(100, 90), r(100, 91), r(100, 92)}, 100, 100, 4096,
			[]resizeAt{r(100, 91), r(100, 92)}, &resizeAt{off: 100, cols: 90, rows: 24}, 0},
		{"sizes from before the stream are dropped", []resizeAt{r(10, 81), r(50, 82), r(120, 83)}, 100, 200, 4096,
			[]resizeAt{r(120, 83)}, nil, 20},
		{"all from before the stream", []resizeAt{r(10, 81), r(50, 82)}, 100, 200, 4096, nil, nil, 100},
		{"just recorded at the end", []resizeAt{r(200, 90)}, 150, 200, 4096, []resizeAt{r(200, 90)}, nil, 50},
		{"an end behind the cursor reads nothing", nil, 150, 100, 4096, nil, nil, 0},
		{"no room", nil, 0, 100, 0, nil, nil, 0},
	} {
		rest, due, limit := nextResize(tc.pending, tc.off, tc.end, tc.room)
		if fmt.Sprint(rest) != fmt.Sprint(tc.rest) || fmt.Sprint(due) != fmt.Sprint(tc.due) || limit != tc.limit {
			t.Errorf("%s: got %v, %v, %d; want %v, %v, %d", tc.name, rest, due, limit, tc.rest, tc.due, tc.limit)
		}
	}
}
