package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/term"

	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// SoakMode reports whether the long versions run (`make soak`).
func SoakMode() bool { return os.Getenv("TK_SOAK") != "" }

// SkipShort skips, under -short (`make test-short`, the fast loop), a
// test that takes more than about 10 s on a quiet 2-core machine: the
// chaos and soak tests, floods, 50 MiB of output, tests that wait out
// timeouts. make test runs them all.
func SkipShort(t *testing.T) {
	if testing.Short() && !SoakMode() {
		t.Skip("a long test: not with -short")
	}
}

// NewLines starts a session running linesChild with the given TK_*
// settings and returns its id.
func (e *Env) NewLines(name string, settings ...string) string {
	e.T.Helper()
	args := []string{"new", "--name", name, "--env", "TK_CHILD=lines"}
	for _, s := range settings {
		args = append(args, "--env", s)
	}
	return strings.TrimSpace(e.MustTk(append(args, "--", SelfBin)...))
}

// linesChild prints numbered lines (see AppendLine) with its tty in raw
// mode, so the log holds exactly the bytes it wrote: TK_BURST lines per
// write, a write every TK_EVERY (0: as fast as the pty takes them), until
// TK_LINES lines (0: no limit) or an 's' on its input. Then it prints
// "END <lines printed>" and exits on a 'q' (or when its input ends).
func linesChild() int {
	limit, _ := strconv.ParseUint(os.Getenv("TK_LINES"), 10, 64)
	burst, _ := strconv.Atoi(os.Getenv("TK_BURST"))
	burst = max(burst, 1)
	pad, _ := strconv.Atoi(os.Getenv("TK_PAD"))
	every, _ := time.ParseDuration(os.Getenv("TK_EVERY"))
	if _, err := term.MakeRaw(0); err != nil {
		fmt.Fprintln(os.Stderr, "raw:", err)
		return 3
	}
	var stop atomic.Bool
	quit := make(chan struct{})
	go func() {
		defer close(quit)
		var b [1]byte
		for {
			if _, err := os.Stdin.Read(b[:]); err != nil {
				return
			}
			switch b[0] {
			case 's':
				stop.Store(true)
			case 'q':
				stop.Store(true)
				return
			}
		}
	}()
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	var buf []byte
	var seq uint64
	for !stop.Load() && (limit == 0 || seq < limit) {
		buf = buf[:0]
		for i := 0; i < burst && (limit == 0 || seq < limit); i++ {
			buf = AppendLine(buf, seq, pad)
			seq++
		}
		if _, err := os.Stdout.Write(buf); err != nil {
			return 4
		}
		if tick != nil {
			<-tick
		}
	}
	fmt.Fprintf(os.Stdout, "END %d\r\n", seq)
	<-quit
	return 0
}

// AppendLine appends line seq as linesChild prints it: ten digits, a space,
// pad letters, a space, the CRC-32 (IEEE) of everything before that last
// space in eight hex digits, CR LF. A line is therefore checkable on its own:
// a torn, garbled or misplaced one shows.
func AppendLine(b []byte, seq uint64, pad int) []byte {
	start := len(b)
	b = fmt.Appendf(b, "%010d ", seq)
	for range pad {
		b = append(b, byte('a'+seq%26))
	}
	sum := crc32.ChecksumIEEE(b[start:])
	return fmt.Appendf(b, " %08x\r\n", sum)
}

// LineChecker checks a stream of linesChild's output fed to it in pieces of
// any size: every line whole and intact, numbered one more than the one
// before (no gap, no duplicate), and at most one END line, last, counting
// the lines before it. After a snapshot (skip) it resumes at the next whole
// line, whatever its number.
type LineChecker struct {
	Next    uint64 // the number the next line must have
	off     uint64 // stream offset of the first byte of partial
	Partial []byte // an unfinished line
	loose   bool   // the next whole line sets next (the stream starts, or skipped)
	drop    bool   // drop bytes up to the next line end (a skip landed mid-line)
	Ended   bool   // the END line came
	Lines   uint64 // whole lines checked
	Err     error  // the first fault; nothing is checked after it
}

// skip says the stream continues at offset off after a gap it was told of
// (a snapshot): the next bytes may start in the middle of a line.
func (c *LineChecker) skip(off uint64) {
	c.off, c.Partial, c.loose, c.drop = off, c.Partial[:0], true, true
}

func (c *LineChecker) write(p []byte) {
	for len(p) > 0 && c.Err == nil {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.Partial = append(c.Partial, p...)
			if len(c.Partial) > 1<<16 {
				c.fail("%d bytes without a line end", len(c.Partial))
			}
			return
		}
		line := p[:i+1]
		if len(c.Partial) > 0 {
			c.Partial = append(c.Partial, line...)
			line = c.Partial
		}
		if c.drop {
			c.drop = false
		} else {
			c.line(line)
		}
		c.off += uint64(len(line))
		c.Partial = c.Partial[:0]
		p = p[i+1:]
	}
}

func (c *LineChecker) fail(format string, args ...any) {
	if c.Err == nil {
		c.Err = fmt.Errorf("at offset %d: %s", c.off, fmt.Sprintf(format, args...))
	}
}

func (c *LineChecker) line(l []byte) {
	if c.Ended {
		c.fail("%q after the END line", l)
		return
	}
	body, ok := bytes.CutSuffix(l, []byte("\r\n"))
	if !ok {
		c.fail("line %q does not end in CR LF", l)
		return
	}
	if n, ok := bytes.CutPrefix(body, []byte("END ")); ok {
		count, err := strconv.ParseUint(string(n), 10, 64)
		switch {
		case err != nil:
			c.fail("bad END line %q", l)
		case !c.loose && count != c.Next:
			c.fail("END says %d lines, the stream had %d", count, c.Next)
		}
		c.Ended = true
		return
	}
	seq, ok := ParseLine(body)
	if !ok {
		c.fail("garbled line %q (want line %d)", l, c.Next)
		return
	}
	switch {
	case c.loose:
		c.loose = false
	case seq < c.Next:
		c.fail("line %d again after line %d (a duplicate)", seq, c.Next-1)
		return
	case seq > c.Next:
		c.fail("line %d after line %d: lines %d to %d are missing (a gap)", seq, int64(c.Next)-1, c.Next, seq-1)
		return
	}
	c.Next = seq + 1
	c.Lines++
}

// ParseLine returns the number of a line (without its CR LF) that
// AppendLine made, and whether it is one.
func ParseLine(body []byte) (uint64, bool) {
	if len(body) < 10+1+1+8 || body[10] != ' ' || body[len(body)-9] != ' ' {
		return 0, false
	}
	seq, err := strconv.ParseUint(string(body[:10]), 10, 64)
	if err != nil {
		return 0, false
	}
	sum, err := strconv.ParseUint(string(body[len(body)-8:]), 16, 32)
	if err != nil || uint32(sum) != crc32.ChecksumIEEE(body[:len(body)-9]) {
		return 0, false
	}
	return seq, true
}

// CheckLog reads a session's whole log (GET output from 0) through a
// LineChecker and returns it with the log's end offset.
func CheckLog(t *testing.T, c *client.Client, ref string) (*LineChecker, uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	zero := uint64(0)
	out, err := c.Output(ctx, ref, &zero)
	if err != nil {
		t.Fatalf("output of %s: %v", ref, err)
	}
	defer out.Close()
	if out.First != 0 {
		t.Fatalf("the log of %s starts at %d: retention dropped its beginning", ref, out.First)
	}
	chk := &LineChecker{}
	buf := make([]byte, 1<<20)
	var n uint64
	for {
		k, err := out.Read(buf)
		chk.write(buf[:k])
		n += uint64(k)
		if err != nil {
			break
		}
	}
	if n != out.End {
		t.Fatalf("output of %s: %d bytes, the header says the log ends at %d", ref, n, out.End)
	}
	return chk, out.End
}

// Follower is a viewer that follows a session across server deaths, as
// `termkeep attach` does: it checks that every output frame begins where
// the one before ended, feeds the bytes to a LineChecker, and after a
// dropped connection attaches again with Hello.From = the offset after the
// last byte it got. A snapshot or a gap frame is a failure (it means bytes
// it did not see), unless allowSkip.
type Follower struct {
	c         *client.Client
	Ref       string
	allowSkip bool
	// A slow follower (see SlowFollower) acks what it has read and stops
	// reading for pause after each readFor.
	readFor, pause time.Duration
	quit           chan struct{} // closed by stop
	done           chan struct{} // closed when run returns

	Mu         sync.Mutex // guards the fields below
	next       uint64     // offset after the last byte received
	Check      LineChecker
	Attaches   int             // connections made, the first included
	AttachWait []time.Duration // from each dropped connection to the next attach
	Snapshots  int             // snapshots that moved it ahead (allowSkip)
	err        error
	stream     *client.Stream
	stopped    bool
}

// StartFollower follows a session's output from offset from in a
// goroutine until Stop; every byte must be exact.
func StartFollower(c *client.Client, ref string, from uint64) *Follower {
	f := newFollower(c, ref, from)
	go f.run()
	return f
}

// SlowFollower starts a follower that behaves like a browser on a slow
// link: it acks what it has read, and after each readFor it stops reading
// for pause, so it falls behind and may be skipped to the present with a
// snapshot. Between snapshots its bytes must still be exact.
func SlowFollower(c *client.Client, ref string, from uint64, readFor, pause time.Duration) *Follower {
	f := newFollower(c, ref, from)
	f.allowSkip, f.readFor, f.pause = true, readFor, pause
	go f.run()
	return f
}

func newFollower(c *client.Client, ref string, from uint64) *Follower {
	f := &Follower{c: c, Ref: ref, next: from, quit: make(chan struct{}), done: make(chan struct{})}
	f.Check.off = from
	if from > 0 {
		f.Check.skip(from)
	}
	return f
}

// run attaches, reads and re-attaches until the session ends, the follower
// fails, or stop is called.
func (f *Follower) run() {
	defer close(f.done)
	var down time.Time // when the last connection dropped
	for {
		f.Mu.Lock()
		from, stopped := f.next, f.stopped
		f.Mu.Unlock()
		if stopped {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := f.c.Attach(ctx, f.Ref, wire.Hello{Role: wire.RoleViewer, From: int64(from)})
		cancel()
		if err != nil {
			var re *wire.RemoteError
			if errors.As(err, &re) && re.Code == wire.CodeUnavailable && strings.Contains(re.Message, "beyond") {
				f.fail("attach from %d: %v", from, err)
				return
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		f.Mu.Lock()
		f.Attaches++
		if !down.IsZero() {
			f.AttachWait = append(f.AttachWait, time.Since(down))
		}
		f.stream = s
		stopped = f.stopped
		f.Mu.Unlock()
		if stopped {
			s.Close()
			return
		}
		if s.Welcome.Start != from {
			f.fail("welcome starts at %d, want %d (resume %s)", s.Welcome.Start, from, s.Welcome.Resume)
			s.Close()
			return
		}
		if end := f.read(s); end {
			return
		}
		s.Close()
		down = time.Now()
	}
}

// read consumes one connection; it reports whether following is over.
func (f *Follower) read(s *client.Stream) (over bool) {
	cycle := time.Now()
	for {
		if f.pause > 0 {
			f.Mu.Lock()
			next := f.next
			f.Mu.Unlock()
			s.Send(func(w *wire.Writer) error { return w.Uint64(wire.TypeAck, next) })
			if time.Since(cycle) >= f.readFor {
				select {
				case <-time.After(f.pause):
				case <-f.quit:
				}
				cycle = time.Now()
			}
		}
		fr, err := s.Next()
		if err != nil {
			f.Mu.Lock()
			defer f.Mu.Unlock()
			return f.stopped
		}
		f.Mu.Lock()
		switch fr.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(fr.Payload)
			if off != f.next {
				f.Mu.Unlock()
				f.fail("output frame at %d, want %d (a gap or a duplicate)", off, f.next)
				return true
			}
			f.Check.write(data)
			f.next += uint64(len(data))
			if f.Check.Err != nil {
				f.Mu.Unlock()
				return true
			}
		case wire.TypeSnapshot:
			off, _, _ := wire.ParseOutput(fr.Payload)
			if !f.allowSkip {
				f.Mu.Unlock()
				f.fail("resynced with a snapshot at %d, %d bytes past what it had", off, off-f.next)
				return true
			}
			if off != f.next {
				f.Snapshots++
				f.Check.skip(off)
				f.next = off
			}
		case wire.TypeGap:
			from, to, _ := wire.ParseGap(fr.Payload)
			f.Mu.Unlock()
			f.fail("gap frame [%d, %d)", from, to)
			return true
		case wire.TypeExit:
			f.Mu.Unlock()
			return true
		}
		f.Mu.Unlock()
	}
}

func (f *Follower) fail(format string, args ...any) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if f.err == nil {
		f.err = fmt.Errorf(format, args...)
	}
}

// State returns where the follower is and its first fault, the checker's
// included.
func (f *Follower) State() (next uint64, ended bool, err error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.next, f.Check.Ended, cmpErr(f.err, f.Check.Err)
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Stop ends following and waits for run to return.
func (f *Follower) Stop() {
	f.Mu.Lock()
	if !f.stopped {
		close(f.quit)
	}
	f.stopped = true
	if f.stream != nil {
		f.stream.Close()
	}
	f.Mu.Unlock()
	<-f.done
}

// WaitFollower waits until f has reached offset at least end (or failed).
func WaitFollower(t *testing.T, f *Follower, what string, d time.Duration, cond func(next uint64, ended bool) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		next, ended, err := f.State()
		if err != nil {
			t.Fatalf("follower of %s: %v", f.Ref, err)
		}
		if cond(next, ended) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("follower of %s: timed out after %s waiting for %s (at offset %d)", f.Ref, d, what, next)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
