package holder

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"termkeep/internal/wire"
)

// The lane's decisions, as a trace of calls and the ends each reported.
func TestLaneDecisions(t *testing.T) {
	type step struct {
		op         string // start, chunk (ask: one with a question), wrote, flushed, stop
		a, b       uint64 // start: at, end; chunk: off, n; wrote: off, n
		wrote      int    // wrote, flushed: bytes the terminal took
		err        error
		allowed    bool
		wantHow    laneHow // chunk
		wantRest   int     // wrote: bytes to queue
		wantEnds   []uint64
		wantIsOpen bool
		wantQueued uint64
		token      uint64 // start, claim
		wantEnd    uint64 // claim: the end it answers
		back       string // handback: keys handed back; claim: the keys it answers
	}
	const max = laneQueueMax
	cases := []struct {
		name  string
		steps []step
	}{
		{"opens at the end, writes, is stopped", []step{
			{op: "start", a: 100, b: 100, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 100, b: 5, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 100, b: 5, wrote: 5, wantIsOpen: true},
			{op: "chunk", a: 105, b: 3, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 105, b: 3, wrote: 3, wantIsOpen: true},
			{op: "stop", wantEnds: []uint64{108}},
			{op: "stop"},
		}},
		{"refused below the end", []step{{op: "start", a: 99, b: 100, allowed: true, wantEnds: []uint64{99}}}},
		{"refused past the end", []step{{op: "start", a: 101, b: 100, allowed: true, wantEnds: []uint64{101}}}},
		{"refused when not allowed", []step{{op: "start", a: 100, b: 100, wantEnds: []uint64{100}}}},
		{"a full terminal queues the chunk, and what follows joins the queue", []step{
			{op: "start", a: 0, b: 0, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 0, b: 10, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 0, b: 10, wrote: -1, err: syscall.EAGAIN, wantRest: 10, wantIsOpen: true, wantQueued: 10},
			{op: "chunk", a: 10, b: 10, wantHow: laneQueue, wantIsOpen: true, wantQueued: 20},
			{op: "flushed", wrote: 15, wantIsOpen: true, wantQueued: 5},
			{op: "flushed", wrote: -1, err: syscall.EAGAIN, wantIsOpen: true, wantQueued: 5},
			{op: "chunk", a: 20, b: 1, wantHow: laneQueue, wantIsOpen: true, wantQueued: 6},
			{op: "flushed", wrote: 6, wantIsOpen: true},
			{op: "chunk", a: 21, b: 4, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 21, b: 4, wrote: 4, wantIsOpen: true},
			{op: "stop", wantEnds: []uint64{25}},
		}},
		{"a short write queues the rest", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 7, b: 10, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 7, b: 10, wrote: 4, wantRest: 6, wantIsOpen: true, wantQueued: 6},
			{op: "stop", wantEnds: []uint64{11}}, // after what the terminal took
		}},
		{"a terminal that falls a queue behind ends it where it stopped", []step{
			{op: "start", a: 0, b: 0, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 0, b: 100, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 0, b: 100, wrote: 40, wantRest: 60, wantIsOpen: true, wantQueued: 60},
			{op: "chunk", a: 100, b: max - 60, wantHow: laneQueue, wantIsOpen: true, wantQueued: max},
			{op: "chunk", a: max + 40, b: 1, wantEnds: []uint64{40}},
			{op: "flushed", wrote: 10}, // a writer's write after the end changes nothing
			{op: "chunk", a: max + 41, b: 1},
		}},
		{"a chunk larger than a queue the terminal did not take ends it", []step{
			{op: "start", a: 0, b: 0, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 0, b: max + 2, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 0, b: max + 2, wrote: 1, wantEnds: []uint64{1}},
		}},
		{"a failed write ends it", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 7, b: 10, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 7, b: 10, wrote: -1, err: syscall.EIO, wantEnds: []uint64{7}},
		}},
		{"a failed write of the queue ends it after what the terminal took", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 7, b: 10, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 7, b: 10, wrote: 2, wantRest: 8, wantIsOpen: true, wantQueued: 8},
			{op: "flushed", wrote: 3, err: syscall.EIO, wantEnds: []uint64{12}},
		}},
		{"bytes it never saw end it before them", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 9, b: 10, wantEnds: []uint64{7}},
		}},
		{"bytes it never saw behind a queue end it where the terminal stopped", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 7, b: 10, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 7, b: 10, wrote: 2, wantRest: 8, wantIsOpen: true, wantQueued: 8},
			{op: "chunk", a: 30, b: 10, wantEnds: []uint64{9}},
		}},
		{"a chunk that asks the terminal a question ends it before the chunk", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 7, b: 3, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 7, b: 3, wrote: 3, wantIsOpen: true},
			{op: "ask", a: 10, b: 8, wantEnds: []uint64{10}},
			{op: "chunk", a: 18, b: 2},
		}},
		{"a question behind a queue ends it where the terminal stopped", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 7, b: 3, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 7, b: 3, wrote: 1, wantRest: 2, wantIsOpen: true, wantQueued: 2},
			{op: "ask", a: 10, b: 8, wantEnds: []uint64{8}},
		}},
		{"a question as the first chunk: the lane wrote nothing", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "ask", a: 7, b: 4, wantEnds: []uint64{7}},
		}},
		{"a chunk behind it ends it too", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 3, b: 10, wantEnds: []uint64{7}},
		}},
		{"an empty chunk changes nothing", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 50, b: 0, wantIsOpen: true},
		}},
		{"a second start ends the first, then opens", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 7, b: 3, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 7, b: 3, wrote: 3, wantIsOpen: true},
			{op: "start", a: 10, b: 10, allowed: true, wantEnds: []uint64{10}, wantIsOpen: true},
			{op: "start", a: 5, b: 10, allowed: true, wantEnds: []uint64{10, 5}},
		}},
		{"a second start with a queue ends the first where its terminal stopped", []step{
			{op: "start", a: 7, b: 7, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 7, b: 3, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 7, b: 3, wrote: 0, wantRest: 3, wantIsOpen: true, wantQueued: 3},
			{op: "start", a: 10, b: 10, allowed: true, wantEnds: []uint64{7}, wantIsOpen: true},
		}},
		{"writes reported while closed are ignored", []step{
			{op: "wrote", a: 0, b: 10, wrote: 10},
			{op: "flushed", wrote: 10},
			{op: "chunk", a: 0, b: 10},
		}},
		{"a claim ends its token's lane and answers where it ended", []step{
			{op: "start", a: 100, b: 100, allowed: true, token: 7, wantIsOpen: true},
			{op: "chunk", a: 100, b: 5, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 100, b: 5, wrote: 3, wantRest: 2, wantIsOpen: true, wantQueued: 2},
			{op: "claim", token: 7, wantEnds: []uint64{103}, wantEnd: 103},
			{op: "start", a: 105, b: 105, allowed: true, token: 7, wantEnds: []uint64{105}}, // claimed: never again
			{op: "claim", token: 7, wantEnd: 103},
		}},
		{"a claim of a lane that ended leaves another token's lane running", []step{
			{op: "start", a: 0, b: 0, allowed: true, token: 7, wantIsOpen: true},
			{op: "chunk", a: 0, b: 10, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 0, b: 10, wrote: 10, wantIsOpen: true},
			{op: "stop", wantEnds: []uint64{10}},
			{op: "start", a: 10, b: 10, allowed: true, token: 8, wantIsOpen: true},
			{op: "claim", token: 7, wantEnd: 10, wantIsOpen: true},
			{op: "stop", wantEnds: []uint64{10}},
			{op: "claim", token: 8, wantEnd: 10},
		}},
		{"a token's last lane is its record", []step{
			{op: "start", a: 0, b: 0, allowed: true, token: 7, wantIsOpen: true},
			{op: "chunk", a: 0, b: 10, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 0, b: 10, wrote: 10, wantIsOpen: true},
			{op: "ask", a: 10, b: 4, wantEnds: []uint64{10}},
			{op: "start", a: 20, b: 20, allowed: true, token: 7, wantIsOpen: true},
			{op: "chunk", a: 20, b: 5, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 20, b: 5, wrote: 5, wantIsOpen: true},
			{op: "stop", wantEnds: []uint64{25}},
			{op: "start", a: 30, b: 30, token: 7, wantEnds: []uint64{30}}, // refused: not a lane, not its record
			{op: "claim", token: 7, wantEnd: 25},
		}},
		{"a claim of a token never seen answers none and refuses its lanes", []step{
			{op: "claim", token: 9},
			{op: "start", a: 0, b: 0, allowed: true, token: 9, wantEnds: []uint64{0}},
		}},
		{"an older server's lanes (token 0) are not recorded", []step{
			{op: "start", a: 0, b: 0, allowed: true, wantIsOpen: true},
			{op: "stop", wantEnds: []uint64{0}},
			{op: "claim"},
			{op: "start", a: 0, b: 0, allowed: true, wantIsOpen: true},
		}},
		{"keys handed back to a server that died go with the claim, once", []step{
			{op: "start", a: 0, b: 0, allowed: true, token: 7, wantIsOpen: true},
			{op: "handback", back: "\x1b[A", wantIsOpen: true},
			{op: "stop", wantEnds: []uint64{0}},
			{op: "claim", token: 7, back: "\x1b[A"},
			{op: "claim", token: 7},
		}},
		{"keys handed back and answered by a lane-read are not claimed", []step{
			{op: "start", a: 0, b: 0, allowed: true, token: 7, wantIsOpen: true},
			{op: "handback", back: "\x1b[A", wantIsOpen: true},
			{op: "answered", wantIsOpen: true},
			{op: "stop", wantEnds: []uint64{0}},
			{op: "claim", token: 7},
		}},
		{"keys handed back before a lane the viewer offered after it are not claimed", []step{
			{op: "start", a: 0, b: 0, allowed: true, token: 7, wantIsOpen: true},
			{op: "handback", back: "\x03", wantIsOpen: true},
			{op: "stop", wantEnds: []uint64{0}},
			{op: "start", a: 0, b: 0, allowed: true, token: 7, wantIsOpen: true},
			{op: "stop", wantEnds: []uint64{0}},
			{op: "claim", token: 7},
		}},
		{"a claim of a running lane takes its unanswered keys", []step{
			{op: "start", a: 0, b: 0, allowed: true, token: 7, wantIsOpen: true},
			{op: "handback", back: "\x1bOP", wantIsOpen: true},
			{op: "claim", token: 7, wantEnds: []uint64{0}, back: "\x1bOP"},
		}},
		{"the largest offsets", []step{
			{op: "start", a: 1<<64 - 5, b: 1<<64 - 5, allowed: true, wantIsOpen: true},
			{op: "chunk", a: 1<<64 - 5, b: 4, wantHow: laneWrite, wantIsOpen: true},
			{op: "wrote", a: 1<<64 - 5, b: 4, wrote: 2, wantRest: 2, wantIsOpen: true, wantQueued: 2},
			{op: "stop", wantEnds: []uint64{1<<64 - 3}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var l lane
			for i, s := range c.steps {
				var ends []uint64
				how, rest := laneSkip, 0
				switch s.op {
				case "start":
					ends = l.start(s.a, s.b, s.allowed, s.token)
				case "claim":
					var end uint64
					var back []byte
					if ends, end, back = l.claim(s.token); end != s.wantEnd || string(back) != s.back {
						t.Fatalf("step %d: claim of %d answers %d %q, want %d %q", i, s.token, end, back, s.wantEnd, s.back)
					}
				case "handback":
					l.handBack([]byte(s.back))
				case "answered":
					l.answered()
				case "chunk":
					how, ends = l.chunk(s.a, int(s.b), false)
				case "ask":
					how, ends = l.chunk(s.a, int(s.b), true)
				case "wrote":
					rest, ends = l.wrote(s.a, int(s.b), s.wrote, s.err)
				case "flushed":
					ends = l.flushed(s.wrote, s.err)
				case "stop":
					ends = l.stop()
				}
				queued := uint64(0)
				if l.open {
					queued = l.next - l.written
				}
				if how != s.wantHow || rest != s.wantRest || fmt.Sprint(ends) != fmt.Sprint(s.wantEnds) && len(ends)+len(s.wantEnds) > 0 || l.open != s.wantIsOpen || queued != s.wantQueued {
					t.Fatalf("step %d (%s %d %d): how %d, rest %d, ends %v, open %v, queued %d; want %d, %d, %v, %v, %d",
						i, s.op, s.a, s.b, how, rest, ends, l.open, queued, s.wantHow, s.wantRest, s.wantEnds, s.wantIsOpen, s.wantQueued)
				}
			}
		})
	}
}

// A holder remembers the last wire.MaxLaneRecords tokens' lanes.
func TestLaneRecordsBounded(t *testing.T) {
	var l lane
	for tok := uint64(1); tok <= wire.MaxLaneRecords+1; tok++ {
		l.start(tok*10, tok*10, true, tok)
		l.wrote(tok*10, 5, 5, nil)
		l.stop()
	}
	if len(l.records) != wire.MaxLaneRecords {
		t.Fatalf("%d records, want %d", len(l.records), wire.MaxLaneRecords)
	}
	if _, end, _ := l.claim(1); end != 0 {
		t.Errorf("the oldest token's end %d is still known", end)
	}
	if _, end, _ := l.claim(wire.MaxLaneRecords + 1); end != (wire.MaxLaneRecords+1)*10+5 {
		t.Errorf("the newest token's end is %d", end)
	}
}

// laneTerm is a terminal for a lane: a pty whose far side (the master)
// the test reads as a terminal emulator would, or not at all.
type laneTerm struct {
	master *os.File
	slave  *os.File // non-blocking, raw: what the holder gets
}

func newLaneTerm(t *testing.T, nonBlocking bool) *laneTerm {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil { // the bytes as written
		t.Fatal(err)
	}
	flags := os.O_RDWR | syscall.O_NOCTTY
	if nonBlocking {
		flags |= syscall.O_NONBLOCK
	}
	slave, err := os.OpenFile(tty.Name(), flags, 0)
	if err != nil {
		t.Fatal(err)
	}
	lt := &laneTerm{master: master, slave: slave}
	t.Cleanup(func() { master.Close(); slave.Close() })
	return lt
}

// giveLane gives the holder a lane on lt's terminal at offset at.
func (s *server) giveLane(lt *laneTerm, at uint64) { s.handLane(lt.slave, at) }

// handLane sends a lane frame at offset at with the terminal f, then
// closes the test's copy of it, so that the holder's is the only one left.
func (s *server) handLane(f *os.File, at uint64, token ...uint64) {
	s.t.Helper()
	var b bytes.Buffer
	if len(token) > 0 {
		wire.NewWriter(&b).Lane(at, token[0], wire.Version)
	} else {
		wire.NewWriter(&b).Uint64(wire.TypeLane, at)
	}
	if _, _, err := s.c.WriteMsgUnix(b.Bytes(), unix.UnixRights(int(f.Fd())), nil); err != nil {
		s.t.Fatal(err)
	}
	f.Close()
}

// drain reads the lane's terminal until it has been quiet for a while
// or is gone (EIO: the holder closed its file).
func (lt *laneTerm) drain(t *testing.T, quiet time.Duration) (got []byte, gone bool) {
	t.Helper()
	buf := make([]byte, 64<<10)
	for {
		lt.master.SetReadDeadline(time.Now().Add(quiet))
		n, err := lt.master.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			if os.IsTimeout(err) {
				return got, false
			}
			return got, true
		}
	}
}

// readAll reads the lane's terminal as fast as it can until it is gone
// (EIO: the holder closed its file), and then sends what it read.
func (lt *laneTerm) readAll(t *testing.T) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		var all []byte
		buf := make([]byte, 64<<10)
		for {
			lt.master.SetReadDeadline(time.Now().Add(wait))
			n, err := lt.master.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil {
				got <- all
				return
			}
		}
	}()
	return got
}

// followLane reads the server's stream until the output reaches to,
// returning the lane ends in the order they came; each lane end must come
// after the output before it.
func (s *server) followLane(to uint64, from uint64) (ends []uint64, exited bool) {
	s.t.Helper()
	at := from
	for at < to && !exited {
		f := s.next()
		switch f.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(f.Payload)
			if off != at {
				s.t.Fatalf("output at %d, want %d", off, at)
			}
			at += uint64(len(data))
		case wire.TypeLaneEnd:
			end, _ := wire.ParseUint64(f.Type, f.Payload)
			if end > at {
				s.t.Fatalf("lane end %d before the output up to it (at %d)", end, at)
			}
			ends = append(ends, end)
		case wire.TypeExit:
			exited = true
		case wire.TypeError:
			_, msg, _ := wire.ParseError(f.Payload)
			s.t.Fatalf("error frame: %s", msg)
		}
	}
	return ends, exited
}

// waitLaneEnd reads frames until a lane end.
func (s *server) waitLaneEnd() uint64 {
	s.t.Helper()
	for {
		f := s.next()
		if f.Type == wire.TypeLaneEnd {
			end, _ := wire.ParseUint64(f.Type, f.Payload)
			return end
		}
		if f.Type == wire.TypeError {
			_, msg, _ := wire.ParseError(f.Payload)
			s.t.Fatalf("error frame: %s", msg)
		}
	}
}

// floodScript waits for a line, then prints n bytes and a marker.
func floodScript(n int) string {
	return fmt.Sprintf(`printf ready; read -r x; head -c %d /dev/zero | tr '\0' 'x'; printf END; read -r y`, n)
}

// A terminal that stops reading ends its lane and costs the child
// nothing: the flood runs to its end, the lane's terminal has exactly the
// bytes from the lane's start to its end, and the server every byte.
func TestLaneStalledTerminal(t *testing.T) {
	const flood = 4 << 20
	th := startHolder(t, floodScript(flood), 0)
	th.waitEnd(5)
	s, wel := th.connect(wire.FromEnd)
	lt := newLaneTerm(t, true)
	s.giveLane(lt, wel.End)
	s.w.Input([]byte("go\n"))
	total := wel.End + flood + 3
	ends, _ := s.followLane(total, wel.End)
	if len(ends) != 1 {
		t.Fatalf("lane ends %v, want one", ends)
	}
	end := ends[0]
	if end <= wel.End || end >= total {
		t.Fatalf("the lane ended at %d; want inside the flood (%d, %d)", end, wel.End, total)
	}
	got, _ := lt.drain(t, 300*time.Millisecond)
	if want := th.logged(wel.End, end); !bytes.Equal(got, want) {
		t.Fatalf("the lane's terminal got %d bytes, the log holds %d between the lane's start and end", len(got), len(want))
	}
	if !bytes.HasSuffix(th.logged(total-3, total), []byte("END")) {
		t.Fatal("the log does not end with the flood's marker")
	}
}

// readLane starts script, connects at the end, gives the connection a lane
// whose terminal the test reads as fast as it can, and lets the script go.
func readLane(t *testing.T, script string) (*testHolder, *server, wire.Welcome, <-chan []byte) {
	t.Helper()
	th := startHolder(t, script, 0)
	th.waitEnd(5)
	s, wel := th.connect(wire.FromEnd)
	lt := newLaneTerm(t, true)
	s.giveLane(lt, wel.End)
	got := lt.readAll(t)
	s.w.Input([]byte("go\n"))
	return th, s, wel, got
}

// closed is all the lane's terminal got, once the holder has closed it.
func closed(t *testing.T, got <-chan []byte) []byte {
	t.Helper()
	select {
	case all := <-got:
		return all
	case <-time.After(wait):
		t.Fatal("the holder kept the lane's terminal open after its end")
		return nil
	}
}

// A terminal slower than the child only for moments keeps its lane: what
// it does not take at once waits in the lane's queue, and it gets every
// byte of bursts larger than it takes at a time, through the lane alone.
func TestLaneKeptThroughBursts(t *testing.T) {
	const bursts, burst = 64, 32 << 10
	th, s, wel, got := readLane(t, fmt.Sprintf(`printf ready; read -r x; for i in $(seq %d); do head -c %d /dev/zero | tr '\0' 'x'; sleep 0.02; done; printf END; read -r y`, bursts, burst))
	total := wel.End + bursts*burst + 3
	if ends, _ := s.followLane(total, wel.End); len(ends) != 0 {
		t.Fatalf("the lane ended at %v during the bursts (%d to %d)", ends, wel.End, total)
	}
	s.w.Frame(wire.TypeLaneOff, nil)
	if end := s.waitLaneEnd(); end != total {
		t.Fatalf("the lane ended at %d; want after every burst, at %d", end, total)
	}
	if all, want := closed(t, got), th.logged(wel.End, total); !bytes.Equal(all, want) {
		t.Fatalf("the lane's terminal got %d bytes; the log holds %d between the lane's start and end", len(all), len(want))
	}
}

// A lane revoked in the middle of a flood ends at an offset, and its
// terminal has exactly the bytes before it; the holder lets the terminal go.
func TestLaneRevoked(t *testing.T) {
	const flood = 4 << 20
	th, s, wel, got := readLane(t, floodScript(flood))
	for th.h.out.End() < wel.End+flood/4 {
		time.Sleep(time.Millisecond)
	}
	s.w.Frame(wire.TypeLaneOff, nil)
	total := wel.End + flood + 3
	ends, _ := s.followLane(total, wel.End)
	if len(ends) != 1 {
		t.Fatalf("lane ends %v, want one", ends)
	}
	all := closed(t, got)
	if want := th.logged(wel.End, ends[0]); !bytes.Equal(all, want) {
		t.Fatalf("the lane's terminal got %d bytes; the log holds %d between the lane's start and end (%d)", len(all), len(want), ends[0])
	}
	if ends[0] == total {
		t.Logf("the flood was over before the revoke (machine busy)")
	}
}

// A server that goes away in the middle of a flood takes its lane with
// it: the holder closes the terminal (which the test reads all along, so
// only that can end the lane), the terminal has a prefix of the log from
// the lane's start, and the next server gets every byte.
func TestLaneServerGone(t *testing.T) {
	// Lines at a pace the test's reader keeps up with, so that the lane
	// never ends for a full terminal.
	const lines, line = 400, 100
	th := startHolder(t, fmt.Sprintf(`printf ready; read -r x; for i in $(seq 1 %d); do printf '%%099d\n' $i; sleep 0.002; done; printf END; read -r y`, lines), 0)
	const flood = lines * line
	th.waitEnd(5)
	s, wel := th.connect(wire.FromEnd)
	lt := newLaneTerm(t, true)
	s.giveLane(lt, wel.End)
	got := lt.readAll(t)
	s.w.Input([]byte("go\n"))
	for th.h.out.End() < wel.End+10*line {
		time.Sleep(time.Millisecond)
	}
	s.c.Close()
	var all []byte
	select {
	case all = <-got:
	case <-time.After(wait):
		t.Fatal("the holder kept the lane's terminal open after its server went")
	}
	if want := th.logged(wel.End, wel.End+uint64(len(all))); !bytes.Equal(all, want) {
		t.Fatalf("the lane's terminal got %d bytes that are not the log's from the lane's start", len(all))
	}
	s2, _ := th.connect(0)
	var st stream
	s2.readTo(&st, wel.End+flood+3)
	if !bytes.HasSuffix(st.data, []byte("END")) || uint64(len(st.data)) != wel.End+flood+3 {
		t.Fatalf("the next server got %d bytes, want %d ending in END", len(st.data), wel.End+flood+3)
	}
}

// Lanes that cannot be served end at once at their start, and the output
// goes on: not at the log's end, a blocking terminal, no file at all.
func TestLaneRefused(t *testing.T) {
	th := startHolder(t, `printf ready; while read -r l; do printf "<%s>" "$l"; done`, 0)
	th.waitEnd(5)
	s, wel := th.connect(wire.FromEnd)
	if got := func() uint64 { s.giveLane(newLaneTerm(t, true), wel.End-1); return s.waitLaneEnd() }(); got != wel.End-1 {
		t.Fatalf("a lane behind the end ended at %d, want %d", got, wel.End-1)
	}
	blocking := newLaneTerm(t, false)
	s.giveLane(blocking, wel.End)
	if got := s.waitLaneEnd(); got != wel.End {
		t.Fatalf("a lane on a blocking terminal ended at %d, want %d", got, wel.End)
	}
	if _, gone := blocking.drain(t, wait); !gone {
		t.Fatal("the holder kept a refused lane's terminal")
	}
	s.w.Uint64(wire.TypeLane, wel.End) // no file
	if got := s.waitLaneEnd(); got != wel.End {
		t.Fatalf("a lane without a file ended at %d, want %d", got, wel.End)
	}
	s.w.Input([]byte("a\n"))
	ends, _ := s.followLane(wel.End+3, wel.End)
	if len(ends) != 0 {
		t.Fatalf("lane ends %v after the refusals", ends)
	}
}

// The switch for A/B: TERMKEEP_ECHO_LANE=off refuses every lane.
func TestLaneSwitchedOff(t *testing.T) {
	t.Setenv(laneEnv, "off")
	th := startHolder(t, `printf ready; read -r l`, 0)
	th.waitEnd(5)
	s, wel := th.connect(wire.FromEnd)
	lt := newLaneTerm(t, true)
	s.giveLane(lt, wel.End)
	if got := s.waitLaneEnd(); got != wel.End {
		t.Fatalf("the lane ended at %d, want %d at once", got, wel.End)
	}
}

// A lane past the log's end is a server that lost track: refused, and
// the connection ends.
func TestLanePastTheEnd(t *testing.T) {
	th := startHolder(t, `printf ready; read -r l`, 0)
	th.waitEnd(5)
	s, wel := th.connect(wire.FromEnd)
	s.giveLane(newLaneTerm(t, true), wel.End+1)
	s.expectError(true)
}
