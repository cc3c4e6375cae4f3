package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Terminal size every contender's viewer and session use.
const (
	termCols = 200
	termRows = 50
)

// source is what one viewer received, chunk by chunk: the bytes read from a
// pty master, or the data of Output frames.
type source interface {
	next() ([]byte, error)
}

// ptySource reads a pty master. The buffer is large so the bench, which
// shares the two cores with the contender, does as few reads as it can.
type ptySource struct {
	f   *os.File
	buf []byte
}

func newPtySource(f *os.File) *ptySource { return &ptySource{f: f, buf: make([]byte, 256<<10)} }

func (p *ptySource) next() ([]byte, error) {
	n, err := p.f.Read(p.buf)
	if n > 0 {
		return p.buf[:n], nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return nil, err
}

// sample is one timed run of one contender.
type sample struct {
	wall      time.Duration
	viewerB   int64 // bytes the viewer received between go and the end marker
	chunks    int   // reads (or Output frames) those bytes came in
	cpu       cpuUse
	gaps      int // wire client only: Gap frames received (output it never saw)
	snapshots int // wire client only: snapshots received (skipped to the present)
	resyncs   int // termkeep only: resyncs the server logged (any viewer skipped to the present)
	termkeep  bool
}

// cpuUse is the CPU time each process spent during a run; a negative value
// means the process does not exist for that contender.
type cpuUse struct {
	child  time.Duration // the cat that printed the file
	owner  time.Duration // the process reading the session's pty: holder or tmux server
	server time.Duration // the termkeep server
	viewer time.Duration // termkeep attach or tmux attach
	bench  time.Duration // this process, reading what the viewer shows
	kernel time.Duration // kworker threads: the kernel's side of the ptys
	all    time.Duration // every core, whoever used it (other load included)
}

func noCPU() cpuUse { return cpuUse{-1, -1, -1, -1, -1, -1, -1} }

// run is what a contender hands to timeRun: a source, how to press go, and
// the processes whose CPU to sample (0: none).
type run struct {
	src       source
	sendGo    func() error
	abort     func()     // unblocks src.next (kills the viewer); called on cancel
	childPid  int        // the session's shell (its cutime is the cat's CPU)
	findChild func() int // when childPid is only known once the child runs
	ownerPid  int
	serverPid int
	viewerPid int
}

// timeRun waits for the ready marker, presses go, and times until the end
// marker reaches the viewer. The clock starts just before the keystroke, so
// it includes the input path (microseconds) and nothing of start-up.
func timeRun(ctx context.Context, r run, m markers) (sample, error) {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			r.abort()
		case <-done:
		}
	}()
	fail := func(what string, err error) (sample, error) {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return sample{}, fmt.Errorf("%s: %w", what, err)
	}

	ready := newScanner(m.ready)
	for {
		p, err := r.src.next()
		if err != nil {
			return fail("waiting for the child to start", err)
		}
		if ready.feed(p) {
			break
		}
	}

	if r.childPid == 0 && r.findChild != nil {
		r.childPid = r.findChild()
	}
	before := sampleCPU(r)
	t0 := time.Now()
	if err := r.sendGo(); err != nil {
		return fail("sending go", err)
	}
	end := newScanner(m.end)
	var n int64
	var chunks int
	for {
		p, err := r.src.next()
		if err != nil {
			return fail("waiting for the end marker", err)
		}
		n += int64(len(p))
		chunks++
		if end.feed(p) {
			break
		}
	}
	s := sample{wall: time.Since(t0), viewerB: n, chunks: chunks}
	// Let the child's shell reap cat before sampling, so its cutime is in.
	time.Sleep(150 * time.Millisecond)
	s.cpu = sampleCPU(r).minus(before)
	return s, nil
}

func sampleCPU(r run) cpuUse {
	u := noCPU()
	if r.childPid > 0 {
		if _, c, err := procCPU(r.childPid); err == nil {
			u.child = c
		}
	}
	self := func(pid int) time.Duration {
		if pid <= 0 {
			return -1
		}
		t, _, err := procCPU(pid)
		if err != nil {
			return -1
		}
		return t
	}
	u.owner, u.server, u.viewer = self(r.ownerPid), self(r.serverPid), self(r.viewerPid)
	u.bench = selfCPU()
	if k, err := kernelWorkers(); err == nil {
		u.kernel = k
	}
	if all, err := machineBusy(); err == nil {
		u.all = all
	}
	return u
}

func (u cpuUse) minus(b cpuUse) cpuUse {
	d := func(x, y time.Duration) time.Duration {
		if x < 0 || y < 0 {
			return -1
		}
		return x - y
	}
	return cpuUse{d(u.child, b.child), d(u.owner, b.owner), d(u.server, b.server), d(u.viewer, b.viewer), d(u.bench, b.bench), d(u.kernel, b.kernel), d(u.all, b.all)}
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// errSkipped marks a contender that cannot run here (tmux not installed).
var errSkipped = errors.New("skipped")
