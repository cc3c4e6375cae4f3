package holder

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"termkeep/internal/fdpass"
	"termkeep/internal/outlog"
	"termkeep/internal/peercred"
	"termkeep/internal/rawio"
	"termkeep/internal/wire"
)

// The server connection: who may connect, the hello, and the forwarder that
// streams the log to the server from the offset it asks for.

// acceptLoop serves upstream connections one at a time. A new connection
// replaces the current one: the newest server is the live one (the old one
// crashed, or is being upgraded and handing over).
func (h *holder) acceptLoop() {
	var delay time.Duration
	for {
		c, err := h.ln.AcceptUnix()
		if err != nil {
			if retryAccept(err, &delay) { // accept.go
				continue
			}
			return
		}
		delay = 0
		h.take(c)
	}
}

// take serves c, a connection accepted on the holder's socket, if it comes
// from our own uid.
func (h *holder) take(c *net.UnixConn) {
	if !samePeer(c) {
		c.Close()
		return
	}
	u := &upstream{h: h, c: c, done: make(chan struct{}), gone: make(chan struct{}), notify: make(chan struct{}, 1)}
	h.mu.Lock()
	if h.ups == nil {
		h.ups = make(map[*upstream]struct{})
	}
	h.ups[u] = struct{}{}
	h.mu.Unlock()
	go u.serve()
}

// samePeer reports whether the peer of c runs as our uid.
func samePeer(c *net.UnixConn) bool {
	uid, err := peercred.UID(c)
	return err == nil && uid == os.Getuid()
}

// upstream is one server connection.
type upstream struct {
	h      *holder
	c      *net.UnixConn
	done   chan struct{} // closed when the forwarder has sent Exit or the conn died
	gone   chan struct{} // closed when the reader has stopped: the conn is dead
	notify chan struct{} // one slot: wakes the forwarder
	wmu    sync.Mutex    // serialises frames written by the reader (pong, errors) and the forwarder
	w      *wire.Writer
	// version is the protocol version agreed with the server (set before
	// the forwarder starts).
	version int
	// ends are the lane ends the forwarder has yet to send (lane.go),
	// guarded by h.mu.
	ends []laneNote
	// reader is the latest input lane's reader on this connection, and
	// typed what lanes wrote to the pty since the last lane-typed frame
	// (lanein.go).
	reader atomic.Pointer[laneReader]
	typed  atomic.Uint64
	// looks are the fg-queries being answered (fgstate.go).
	looks sync.WaitGroup
	// quietMax bounds laneQuiet's wait; the forwarder's own.
	quietMax *time.Timer
}

func (u *upstream) send(fn func(w *wire.Writer) error) error {
	u.wmu.Lock()
	defer u.wmu.Unlock()
	return fn(u.w)
}

func (u *upstream) serve() {
	h := u.h
	defer func() {
		u.c.Close()
		u.looks.Wait()
		h.closeLane(u, false) // nobody to tell
		close(u.gone)
		h.mu.Lock()
		if h.conn == u {
			h.conn = nil
		}
		delete(h.ups, u)
		h.mu.Unlock()
	}()
	rc, err := u.c.SyscallConn()
	if err != nil {
		close(u.done)
		return
	}
	u.w = wire.NewWriter(rawio.NewReadWriter(rc))
	var buf []byte
	u.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// One read per burst of frames rather than two per frame (header, then
	// payload): keystrokes arrive here one frame at a time.
	// The reader keeps the terminals that come with lane frames.
	fr := fdpass.NewReader(rc)
	defer fr.Close()
	br := bufio.NewReaderSize(fr, 16<<10)
	f, err := wire.ReadFrame(br, &buf)
	if err != nil || f.Type != wire.TypeHello {
		u.fail(wire.CodeMalformed, "expected a hello frame")
		close(u.done)
		return
	}
	var hello wire.Hello
	if err := wire.ParseJSON(f.Payload, &hello); err != nil {
		u.fail(wire.CodeMalformed, err.Error())
		close(u.done)
		return
	}
	if hello.Version < wire.MinVersion {
		u.fail(wire.CodeVersion, fmt.Sprintf("protocol version %d is too old; this holder speaks %d..%d", hello.Version, wire.MinVersion, wire.Version))
		close(u.done)
		return
	}
	u.c.SetReadDeadline(time.Time{})
	// Damage written over the log while no server followed it (its
	// headers hit) leaves readers estimating where it ends; a new
	// segment's name tells them.
	if err := h.out.Seal(); err != nil {
		h.log.Warn("seal a damaged log segment", "err", err)
	}
	first, end := h.out.First(), h.out.End()
	from, start, err := resumeAt(hello.From, first, end)
	if err != nil {
		u.fail(wire.CodeUnavailable, err.Error())
		close(u.done)
		return
	}

	// A hello that can be served makes this the live connection; the one
	// before it is from a server that died or is handing over. A refused
	// one changes nothing.
	h.mu.Lock()
	old := h.conn
	h.conn = u
	h.mu.Unlock()
	if old != nil {
		old.c.Close()
	}

	u.version = min(hello.Version, wire.Version)
	h.mu.Lock()
	welcome := wire.Welcome{
		Version: u.version, Session: h.spec.ID, Pid: h.meta.Pid,
		First: first, End: end, Start: start, Cols: h.meta.Cols, Rows: h.meta.Rows,
		Exited: h.exited,
	}
	h.mu.Unlock()
	if err := u.send(func(w *wire.Writer) error { return w.JSON(wire.TypeWelcome, welcome) }); err != nil {
		close(u.done)
		return
	}

	go u.forward(from)
	for {
		f, err := wire.ReadFrame(br, &buf)
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) {
				u.fail(wire.CodeMalformed, err.Error())
			}
			return
		}
		if err := wire.Validate(f); err != nil {
			u.fail(wire.CodeMalformed, err.Error())
			return
		}
		switch f.Type {
		case wire.TypeInput:
			if _, err := h.ptmxW.Write(f.Payload); err != nil {
				h.log.Warn("write input", "err", err)
			} else if br.Buffered() == 0 {
				h.awaitEcho()
			}
		case wire.TypeResize:
			cols, rows, _ := wire.ParseResize(f.Payload)
			h.resize(cols, rows)
		case wire.TypeSignal:
			sig, _ := wire.ParseSignal(f.Payload)
			h.signalChild(syscall.Signal(sig))
		case wire.TypeSignalFg:
			sig, _ := wire.ParseSignal(f.Payload)
			h.signalForeground(syscall.Signal(sig))
		case wire.TypeClose:
			ms, _ := wire.ParseClose(f.Payload)
			h.close(time.Duration(ms) * time.Millisecond)
		case wire.TypePing:
			v, _ := wire.ParseUint64(f.Type, f.Payload)
			u.send(func(w *wire.Writer) error { return w.Uint64(wire.TypePong, v) })
		case wire.TypeCwd:
			h.setCwd(string(f.Payload))
		case wire.TypeName:
			h.setName(string(f.Payload)) // name.go
		case wire.TypeShutdown:
			on, _ := wire.ParseShutdown(f.Payload)
			h.prepareShutdown(on) // shutdown.go
			u.send(func(w *wire.Writer) error { return w.Shutdown(wire.TypePrepared, on) })
		case wire.TypeLane:
			at, token, _ := wire.ParseLane(f.Payload)
			fd := fr.Take()
			if at > h.out.End() {
				if fd >= 0 {
					syscall.Close(fd)
				}
				u.fail(wire.CodeMalformed, fmt.Sprintf("a lane at %d, past the end of the log (%d)", at, h.out.End()))
				return
			}
			h.openLane(u, at, token, fd)
		case wire.TypeLaneClaim:
			token, _ := wire.ParseUint64(f.Type, f.Payload)
			h.claimLane(u, token)
		case wire.TypeLaneOff:
			h.closeLane(u, true)
		case wire.TypeLaneRead:
			pid, _ := wire.ParseLaneRead(f.Payload)
			h.laneRead(u, pid)
		case wire.TypeFgQuery:
			id, _ := wire.ParseUint64(f.Type, f.Payload)
			u.answerFgQuery(id)
		case wire.TypeAck:
		default:
			u.fail(wire.CodeMalformed, fmt.Sprintf("a holder does not accept %s frames", f.Type))
			return
		}
	}
}

// sendTyped tells the server how many bytes input lanes wrote to the pty
// since it last did; it reports false when the connection failed.
func (u *upstream) sendTyped() bool {
	if n := u.typed.Swap(0); n > 0 {
		return u.send(func(w *wire.Writer) error { return w.Uint64(wire.TypeLaneTyped, n) }) == nil
	}
	return true
}

// laneQuiet lets new output wait while an input lane reads, until typing
// pauses (lanein.go); it reports false when the connection is gone.
func (u *upstream) laneQuiet() bool {
	r := u.reader.Load()
	if r == nil || r.stopped.Load() || time.Now().UnixNano()-r.typedAt.Load() >= int64(laneQuietFor) {
		return true // output that is not typing's goes at once
	}
	if u.quietMax == nil {
		u.quietMax = time.NewTimer(laneForwardMax)
	} else {
		u.quietMax.Reset(laneForwardMax)
	}
	defer u.quietMax.Stop()
	select {
	case <-r.quiet.C:
		return true
	case <-u.quietMax.C:
		return true
	case <-r.done:
		return true
	case <-u.gone:
		return false
	}
}

// sendLaneEnds sends the lane ends due once the output below sent has
// gone; it reports false when the connection failed.
func (u *upstream) sendLaneEnds(sent uint64) bool {
	due := u.dueLaneEnds(sent)
	if r := u.reader.Load(); r != nil && len(due) > 0 {
		r.barrier() // keys read before the end have gone where they go
	}
	for _, n := range due {
		err := u.send(func(w *wire.Writer) error {
			if n.claimed {
				return w.LaneClaimed(n.token, n.off, n.back)
			}
			return w.Uint64(wire.TypeLaneEnd, n.off)
		})
		if err != nil {
			return false
		}
	}
	return true
}

func (u *upstream) fail(code uint16, msg string) {
	u.send(func(w *wire.Writer) error { return w.Error(code, msg) })
	u.c.Close()
}

// resumeAt decides where a server's stream starts, given the offset its
// hello asks for (wire.FromEnd, or any negative: the end) and the log's
// first and end offsets: from is where the forwarder's cursor starts, start
// the first byte it will send. An offset below first is served: the
// forwarder reports the bytes retention deleted as a gap, then goes on from
// first (start). An
// offset past end is refused: those bytes do not exist yet, and a server
// that claims them has lost track of the session.
func resumeAt(want int64, first, end uint64) (from, start uint64, err error) {
	from = end
	if want >= 0 {
		from = uint64(want)
	}
	if from > end {
		return 0, 0, fmt.Errorf("offset %d is beyond the end of the log (%d)", from, end)
	}
	return from, max(from, first), nil
}

// nextResize decides, for a forwarder at off, whether a Resized frame is due
// and how far it may read: a Resized frame must sit at its offset in the
// stream, so no read may pass a pending resize. pending is the resizes not
// yet sent, oldest first; end is the log's end, read under the same lock
// as pending. It returns pending without the resizes behind off (in force
// before this stream begins) and without the one it returns as due (at
// off: to send now, before any byte), and the most the next read may take:
// up to the next resize, and never past end, because a resize recorded
// after this look is at or past end (bytes appended meanwhile are read on
// the next turn, after a look that sees it).
func nextResize(pending []resizeAt, off, end uint64, room int) (rest []resizeAt, due *resizeAt, limit int) {
	for len(pending) > 0 && pending[0].off < off {
		pending = pending[1:]
	}
	if len(pending) > 0 && pending[0].off == off {
		r := pending[0]
		return pending[1:], &r, 0
	}
	stop := end
	if len(pending) > 0 {
		stop = min(stop, pending[0].off)
	}
	return pending, nil, int(min(uint64(room), stop-min(stop, off)))
}

// forward streams the log from offset from to the server, following its end,
// and finishes with an Exit frame once the child has ended.
func (u *upstream) forward(from uint64) {
	defer close(u.done)
	h := u.h
	cur := h.out.Cursor(from)
	defer cur.Close()
	// The server's viewers may be up to the log's retention behind what
	// the server has taken: keep those bytes while it drains a burst, and
	// pace the pty's reader by it (relay.go). (A replaced connection's
	// Release may briefly undo its successor's Hold, which the successor's
	// next frame restores.)
	h.relay.sent(from, time.Now())
	defer h.out.Release()
	// Frames are read from the log straight into place behind their
	// header (no copy), in a buffer whose pages a burst touched go back
	// once the stream has caught up (framebuf.go). It holds at least
	// outlog.ReadBuffer, so the cursor checks each record's checksum
	// before it returns a byte of it.
	fb := newFrameBuffer()
	defer fb.close()
	frame := fb.b
	buf := frame[wire.OutputHeaderSize:]
	var logSent uint64
	lingerSent := false
	var modeSent modeSent // termmode.go
	lastOut := time.Now()
	// One timer and one error target for the stream's life: per chunk,
	// the forwarder allocates nothing.
	wakeUp := time.NewTimer(time.Hour)
	defer wakeUp.Stop()
	var gap *outlog.GapError
	for {
		off := cur.Offset()
		h.mu.Lock()
		var pending *resizeAt
		var limit int
		h.resizes, pending, limit = nextResize(h.resizes, off, h.out.End(), len(buf))
		exited, exitFrame := h.exited, h.exitFrame
		logVer, logState := h.logVer, h.logState
		linger := h.linger
		h.mu.Unlock()
		if linger != nil && !lingerSent && u.version >= 4 {
			lingerSent = true
			if u.send(func(w *wire.Writer) error { return w.JSON(wire.TypeLinger, *linger) }) != nil {
				return
			}
		}
		if logVer != logSent && u.version >= 2 {
			logSent = logVer
			if u.send(func(w *wire.Writer) error { return w.JSON(wire.TypeLog, logState) }) != nil {
				return
			}
		}
		if pending != nil {
			if u.send(func(w *wire.Writer) error { return w.Resized(pending.off, pending.cols, pending.rows) }) != nil {
				return
			}
			continue
		}
		if !u.sendLaneEnds(off) {
			return
		}

		n, err := cur.Read(buf[:limit])
		switch {
		case n > 0:
			fb.used(wire.OutputHeaderSize + n)
			if !u.sendTyped() {
				return
			}
			if u.send(func(w *wire.Writer) error { return w.OutputInPlace(off, frame[:wire.OutputHeaderSize+n]) }) != nil {
				return
			}
			lastOut = time.Now()
			h.relay.sent(off+uint64(n), lastOut)
		case errors.Is(err, outlog.ErrCompacted):
			first := h.out.First()
			if u.send(func(w *wire.Writer) error { return w.Gap(off, first) }) != nil {
				return
			}
			cur.Seek(first)
		case errors.As(err, &gap):
			// Bytes that went by while the log was stopped and are no
			// longer kept in memory; the cursor is past them.
			if u.send(func(w *wire.Writer) error { return w.Gap(gap.Start, gap.End) }) != nil {
				return
			}
		case errors.Is(err, outlog.ErrCorrupt):
			next := max(h.out.SkipCorrupt(off), off+1)
			h.log.Error("output log is damaged; skipping", "from", off, "to", next, "err", err)
			if u.send(func(w *wire.Writer) error { return w.Gap(off, next) }) != nil {
				return
			}
			cur.Seek(next)
		case err == io.EOF || err == nil:
			if exited && off >= exitFrame.End {
				// The lane's end goes before the Exit, the stream's
				// last frame.
				h.closeLane(u, true)
				if !u.sendLaneEnds(off) {
					return
				}
				u.send(func(w *wire.Writer) error { return w.JSON(wire.TypeExit, exitFrame) })
				return
			}
			if !u.sendTyped() {
				return
			}
			// A safety net: a missed poke must never stall a stream.
			wake := time.Second
			if u.version >= 7 {
				// Caught up: the output has stopped, for now.
				if u.sendTermMode(&modeSent, off) != nil {
					return
				}
				wake = recheckAfter(time.Since(lastOut))
			}
			fb.release()
			wakeUp.Reset(wake)
			select {
			case <-u.notify:
				if !u.laneQuiet() {
					return
				}
			case <-u.gone:
				return
			case <-wakeUp.C:
			}
			wakeUp.Stop()
		default:
			h.log.Error("read output log", "err", err)
			u.send(func(w *wire.Writer) error { return w.Error(wire.CodeInternal, "read output log: "+err.Error()) })
			return
		}
	}
}
