package holder

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"termkeep/internal/wire"
)

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want procStat
		bad  bool
	}{
		{in: "4242 (termkeep) S 100 4242 100 34817 4242 4194304 1 2", want: procStat{state: 'S', pgrp: 4242, ttyNr: 34817, tpgid: 4242}},
		{in: "7 (a) (b)) T 1 7 1 34818 9 0", want: procStat{state: 'T', pgrp: 7, ttyNr: 34818, tpgid: 9}},
		{in: "8 (sp ace) R 1 8 1 0 -1 0", want: procStat{state: 'R', pgrp: 8, tpgid: -1}},
		{in: "", bad: true},
		{in: "9 (x) S 1 2", bad: true},
		{in: "9 (x) S 1 2 3 4 five", bad: true},
		{in: "9 (x) SS 1 2 3 4 5", bad: true},
		{in: "9 x S 1 2 3 4 5", bad: true},
	} {
		got, err := parseProcStat([]byte(tc.in))
		if (err != nil) != tc.bad || !tc.bad && got != tc.want {
			t.Errorf("parseProcStat(%q) = %+v, %v; want %+v (bad %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestProcStatForeground(t *testing.T) {
	const tty = 34817
	for _, tc := range []struct {
		name string
		s    procStat
		want bool
	}{
		{"running in the foreground", procStat{state: 'S', pgrp: 5, ttyNr: tty, tpgid: 5}, true},
		{"busy in the foreground", procStat{state: 'R', pgrp: 5, ttyNr: tty, tpgid: 5}, true},
		{"stopped", procStat{state: 'T', pgrp: 5, ttyNr: tty, tpgid: 5}, false},
		{"traced", procStat{state: 't', pgrp: 5, ttyNr: tty, tpgid: 5}, false},
		{"a zombie", procStat{state: 'Z', pgrp: 5, ttyNr: tty, tpgid: 5}, false},
		{"in the background", procStat{state: 'S', pgrp: 5, ttyNr: tty, tpgid: 6}, false},
		{"another terminal", procStat{state: 'S', pgrp: 5, ttyNr: tty + 1, tpgid: 5}, false},
		{"no terminal", procStat{state: 'S', pgrp: 5, ttyNr: 0, tpgid: -1}, false},
		{"no foreground group", procStat{state: 'S', pgrp: -1, ttyNr: tty, tpgid: -1}, false},
	} {
		if got := tc.s.foreground(tty); got != tc.want {
			t.Errorf("%s: foreground = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An input lane reads its process's stat for every key: parsing it leaves
// no garbage.
func TestParseProcStatAllocatesNothing(t *testing.T) {
	b := []byte("4242 (termkeep) S 100 4242 100 34817 4242 4194304 0 0 0 0 0 0 0 0 20 0 1 0")
	var s procStat
	allocs := testing.AllocsPerRun(100, func() { s, _ = parseProcStat(b) })
	if allocs != 0 || s != (procStat{state: 'S', pgrp: 4242, ttyNr: 34817, tpgid: 4242}) {
		t.Fatalf("parseProcStat: %+v with %v allocations; want 0", s, allocs)
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (termkeep) S 100 4242 100 34817 4242 4194304"))
	f.Add([]byte("1 ()) ) R 0 0 0 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseProcStat(b)
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(b, ')'); i < 0 || !bytes.Contains(b[i:], []byte{s.state}) {
			t.Fatalf("%q: state %q not after the last ')'", b, s.state)
		}
	})
}

// ownedTerm is a terminal a process of its own leads, as attach's shell
// terminal: the test types at its master side; file is what attach hands
// over (another open of it, non-blocking).
type ownedTerm struct {
	master, tty, file *os.File
	proc              *exec.Cmd
}

func newOwnedTerm(t *testing.T) *ownedTerm {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	file, err := os.OpenFile(tty.Name(), os.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	ot := &ownedTerm{master: master, tty: tty, file: file, proc: cmd}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		master.Close()
		tty.Close()
		file.Close()
	})
	return ot
}

// waiting is how many typed bytes the terminal holds unread.
func (ot *ownedTerm) waiting(t *testing.T) int {
	t.Helper()
	n, err := unix.IoctlGetInt(int(ot.tty.Fd()), unix.TIOCINQ)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// inputLane is a holder running perKey with an input lane on ot's
// terminal, read for ot's process; the first key, a, has gone through it.
func inputLane(t *testing.T) (th *testHolder, s *server, wel wire.Welcome, ot *ownedTerm) {
	t.Helper()
	th = startHolder(t, perKey, 0)
	th.waitEnd(5)
	s, wel = th.connect(wire.FromEnd)
	ot = newOwnedTerm(t)
	s.handLane(ot.file, wel.End)
	s.w.LaneRead(uint32(ot.proc.Process.Pid))
	// The lane-read may still be on its way: the key waits for it.
	ot.master.Write([]byte("a"))
	ot.readEcho(t, "<a>")
	return th, s, wel, ot
}

// stays types k and checks that nobody reads it from the terminal: it is
// there for whoever reads it next.
func (ot *ownedTerm) stays(t *testing.T, k string) {
	t.Helper()
	ot.master.Write([]byte(k))
	time.Sleep(100 * time.Millisecond)
	if n := ot.waiting(t); n != len(k) {
		t.Fatalf("the terminal holds %d unread bytes, want the %d just typed", n, len(k))
	}
}

// until reads the server's stream, failing on an error frame, until stop
// says so.
func (s *server) until(stop func(f wire.Frame) bool) {
	s.t.Helper()
	for {
		f := s.next()
		if f.Type == wire.TypeError {
			_, msg, _ := wire.ParseError(f.Payload)
			s.t.Fatalf("error frame: %s", msg)
		}
		if stop(f) {
			return
		}
	}
}

// readEcho reads the terminal's master side until it holds want.
func (ot *ownedTerm) readEcho(t *testing.T, want string) {
	t.Helper()
	var got []byte
	buf := make([]byte, 4096)
	deadline := time.Now().Add(wait)
	for !strings.Contains(string(got), want) {
		ot.master.SetReadDeadline(deadline)
		n, err := ot.master.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("the terminal shows %q, want %q: %v", got, want, err)
		}
	}
}

const perKey = `printf ready; while read -r -n1 c; do printf "<%s>" "$c"; done`

// Typing read from the lane's terminal reaches the program, its echo the
// terminal, and the server hears how much was typed.
func TestInputLaneTypes(t *testing.T) {
	th, s, wel, ot := inputLane(t)
	ot.master.Write([]byte("bc"))
	ot.readEcho(t, "<c>")
	typed := uint64(0)
	s.until(func(f wire.Frame) bool {
		if f.Type == wire.TypeLaneTyped {
			n, _ := wire.ParseUint64(f.Type, f.Payload)
			typed += n
		}
		return typed >= 3
	})
	if typed != 3 {
		t.Fatalf("lane-typed frames say %d bytes, want 3", typed)
	}
	if got := string(th.logged(wel.End, th.h.out.End())); got != "<a><b><c>" {
		t.Fatalf("the log holds %q after the lane's start", got)
	}
}

// Anything but plain typing goes back to the server, and nothing typed
// after it is read until the server says so: keys keep their order.
func TestInputLaneHandsBack(t *testing.T) {
	th, s, wel, ot := inputLane(t)
	ot.master.Write([]byte("\x1b[A"))
	var back []byte
	s.until(func(f wire.Frame) bool {
		if f.Type == wire.TypeLaneInput {
			back = append([]byte(nil), f.Payload...)
			return true
		}
		return false
	})
	if string(back) != "\x1b[A" {
		t.Fatalf("handed back %q, want the arrow", back)
	}
	ot.stays(t, "z") // not read after a hand-back
	// The server writes what was handed back, then lets the holder read on.
	s.w.Input([]byte("b"))
	s.w.LaneRead(uint32(ot.proc.Process.Pid))
	ot.readEcho(t, "<z>")
	if got := string(th.logged(wel.End, th.h.out.End())); got != "<a><b><z>" {
		t.Fatalf("the log holds %q after the lane's start, want <a><b><z>", got)
	}
}

// Keys handed back to a server that dies before it answers are not lost:
// the lane's record keeps them, and the claim of the viewer's next
// connection hands them on, once, with the lane's exact end.
func TestInputLaneHandBackSurvivesTheServer(t *testing.T) {
	th := startHolder(t, perKey, 0)
	th.waitEnd(5)
	s, wel := th.connect(wire.FromEnd)
	ot := newOwnedTerm(t)
	s.handLane(ot.file, wel.End, 42)
	s.w.LaneRead(uint32(ot.proc.Process.Pid))
	ot.master.Write([]byte("a"))
	ot.readEcho(t, "<a>")
	ot.master.Write([]byte("\x1b[A"))
	s.until(func(f wire.Frame) bool { return f.Type == wire.TypeLaneInput })
	s.c.Close() // the server is killed before its lane-read

	claim := func() (end uint64, back string) {
		s2, _ := th.connect(wire.FromEnd)
		defer s2.c.Close()
		s2.w.Uint64(wire.TypeLaneClaim, 42)
		s2.until(func(f wire.Frame) bool {
			if f.Type != wire.TypeLaneClaimed {
				return false
			}
			tok, e, b, err := wire.ParseLaneClaimed(f.Payload)
			if err != nil || tok != 42 {
				t.Fatalf("lane-claimed for %d: %v", tok, err)
			}
			end, back = e, string(b)
			return true
		})
		return end, back
	}
	end, back := claim()
	if back != "\x1b[A" {
		t.Fatalf("the claim hands on %q, want the arrow", back)
	}
	if want := wel.End + uint64(len("<a>")); end != want {
		t.Fatalf("the claimed lane ended at %d, want %d (after its echo)", end, want)
	}
	if _, back := claim(); back != "" {
		t.Fatalf("a second claim hands on %q again", back)
	}
}

// A process that stops (its shell takes the terminal back) or leaves the
// foreground has its terminal read no more: the lane ends and the key
// stays for the shell.
func TestInputLaneStopsWithItsProcess(t *testing.T) {
	th, s, wel, ot := inputLane(t)
	if err := ot.proc.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer ot.proc.Process.Signal(syscall.SIGCONT)
	for deadline := time.Now().Add(wait); ; time.Sleep(time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", ot.proc.Process.Pid))
		if ps, err := parseProcStat(b); err == nil && ps.state == 'T' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the process did not stop")
		}
	}
	ot.stays(t, "q")
	if end := s.waitLaneEnd(); end != wel.End+3 {
		t.Fatalf("the lane ended at %d, want %d (after <a>)", end, wel.End+3)
	}
	if got := string(th.logged(wel.End, th.h.out.End())); got != "<a>" {
		t.Fatalf("the log holds %q after the lane's start, want <a>", got)
	}
}

// A lane-read for a process whose controlling terminal is another (or
// with input lanes switched off) ends the lane at once: its viewer reads
// its own terminal again.
func TestInputLaneRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  string
		pid  func(ot *ownedTerm) int
	}{
		{"not its terminal", "", func(*ownedTerm) int { return os.Getpid() }},
		{"no such process", "", func(*ownedTerm) int { return 1 << 30 }},
		{"switched off", laneInputOff, func(ot *ownedTerm) int { return ot.proc.Process.Pid }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(laneEnv, tc.env)
			th := startHolder(t, perKey, 0)
			th.waitEnd(5)
			s, wel := th.connect(wire.FromEnd)
			ot := newOwnedTerm(t)
			s.handLane(ot.file, wel.End)
			s.w.LaneRead(uint32(tc.pid(ot)))
			if end := s.waitLaneEnd(); end != wel.End {
				t.Fatalf("the lane ended at %d, want %d", end, wel.End)
			}
			ot.stays(t, "k")
		})
	}
}

// A lane revoked while it reads leaves later keys in the terminal.
func TestInputLaneRevoked(t *testing.T) {
	_, s, wel, ot := inputLane(t)
	s.w.Frame(wire.TypeLaneOff, nil)
	if end := s.waitLaneEnd(); end != wel.End+3 {
		t.Fatalf("the lane ended at %d, want %d", end, wel.End+3)
	}
	ot.stays(t, "k")
}

// While an input lane reads, a key's echo reaches the server only once
// typing pauses: never within laneQuietFor of the key, so the server is
// not woken in the middle of the next key's way.
func TestInputLaneForwardsBetweenKeys(t *testing.T) {
	_, s, _, ot := inputLane(t)
	for i := range 5 {
		k := string(rune('b' + i))
		typed := time.Now()
		ot.master.Write([]byte(k))
		ot.readEcho(t, "<"+k+">")
		s.until(func(f wire.Frame) bool {
			if f.Type != wire.TypeOutput {
				return false
			}
			_, data, _ := wire.ParseOutput(f.Payload)
			if !bytes.Contains(data, []byte("<"+k+">")) {
				return false
			}
			if d := time.Since(typed); d < laneQuietFor {
				t.Fatalf("key %s's echo reached the server %v after the key, within %v", k, d, laneQuietFor)
			}
			return true
		})
	}
}
