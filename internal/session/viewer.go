package session

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/wire"
)

// viewerChunk bounds one Output frame sent to a viewer.
const viewerChunk = 256 << 10

// ViewerOptions says what a viewer may do and how its Welcome reads.
type ViewerOptions struct {
	// ReadOnly viewers may watch but never write input, resize or signal.
	ReadOnly bool
	// Name is the session's name, echoed in the Welcome.
	Name string
}

// ServeViewer streams the session to one viewer over rw, a connection that
// speaks wire frames: it answers hello with a Welcome, sends the output from
// hello.From on (a Gap first when retention dropped part of it), then live
// output, then an Exit frame when the session ends. Frames from the viewer
// (input, resize, signal, ping) are applied as they arrive. It returns when
// the viewer goes away or the session has ended and the viewer has been
// told; it closes rw.
func (h *Host) ServeViewer(rw io.ReadWriteCloser, hello wire.Hello, opts ViewerOptions) error {
	defer rw.Close()
	v := &viewer{h: h, rw: rw, w: wire.NewWriter(rw), gone: make(chan struct{})}

	l, err := h.outlog()
	if err != nil {
		v.send(func(w *wire.Writer) error { return w.Error(wire.CodeUnavailable, "session output log: "+err.Error()) })
		return err
	}
	l.Refresh()
	h.mu.Lock()
	end, cols, rows, pid, exit := h.end, h.cols, h.rows, h.pid, h.exit
	h.mu.Unlock()
	if exit != nil {
		end = max(end, exit.End)
	}
	first := l.First()
	from := end
	if hello.From >= 0 {
		from = uint64(hello.From)
	}
	if from > end {
		msg := fmt.Sprintf("offset %d is beyond the session's end (%d)", from, end)
		v.send(func(w *wire.Writer) error { return w.Error(wire.CodeUnavailable, msg) })
		return errors.New("session: " + msg)
	}
	if !opts.ReadOnly && exit == nil && hello.Cols > 0 && hello.Rows > 0 {
		if h.Resize(hello.Cols, hello.Rows) == nil {
			cols, rows = hello.Cols, hello.Rows
		}
	}
	welcome := wire.Welcome{
		Version: min(max(hello.Version, wire.MinVersion), wire.Version), Session: h.ID, Name: opts.Name,
		Pid: pid, First: first, End: end, Start: max(from, first), Cols: cols, Rows: rows,
		Exited: exit != nil,
	}
	if err := v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeWelcome, welcome) }); err != nil {
		return err
	}
	if hello.Role != wire.RoleWaiter {
		go v.readLoop(opts.ReadOnly)
	} else {
		go v.drain()
	}
	return v.writeLoop(from, l)
}

type viewer struct {
	h    *Host
	rw   io.ReadWriteCloser
	wmu  sync.Mutex // serialises frames from the write loop and the read loop
	w    *wire.Writer
	gone chan struct{} // closed when the viewer's side has ended
	once sync.Once
}

func (v *viewer) send(fn func(*wire.Writer) error) error {
	v.wmu.Lock()
	defer v.wmu.Unlock()
	return fn(v.w)
}

func (v *viewer) leave() { v.once.Do(func() { close(v.gone); v.rw.Close() }) }

// drain reads and discards whatever a waiter sends, to notice it leaving.
func (v *viewer) drain() {
	defer v.leave()
	io.Copy(io.Discard, v.rw)
}

func (v *viewer) readLoop(readOnly bool) {
	defer v.leave()
	r := v.rw
	var buf []byte
	for {
		f, err := wire.ReadFrame(r, &buf)
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) {
				v.send(func(w *wire.Writer) error { return w.Error(wire.CodeMalformed, err.Error()) })
			}
			return
		}
		if err := wire.Validate(f); err != nil {
			v.send(func(w *wire.Writer) error { return w.Error(wire.CodeMalformed, err.Error()) })
			return
		}
		var opErr error
		switch f.Type {
		case wire.TypeInput, wire.TypeResize, wire.TypeSignal:
			if readOnly {
				v.send(func(w *wire.Writer) error {
					return w.Error(wire.CodeForbidden, "this viewer is read-only: input, resize and signals are refused")
				})
				continue
			}
			switch f.Type {
			case wire.TypeInput:
				opErr = v.h.Input(f.Payload)
			case wire.TypeResize:
				cols, rows, _ := wire.ParseResize(f.Payload)
				opErr = v.h.Resize(cols, rows)
			case wire.TypeSignal:
				sig, _ := wire.ParseSignal(f.Payload)
				opErr = v.h.Signal(sig)
			}
		case wire.TypePing:
			x, _ := wire.ParseUint64(f.Type, f.Payload)
			v.send(func(w *wire.Writer) error { return w.Uint64(wire.TypePong, x) })
		case wire.TypeAck:
		default:
			msg := fmt.Sprintf("a viewer may not send %s frames", f.Type)
			v.send(func(w *wire.Writer) error { return w.Error(wire.CodeMalformed, msg) })
			return
		}
		if opErr != nil && !errors.Is(opErr, ErrEnded) {
			msg := opErr.Error()
			v.send(func(w *wire.Writer) error { return w.Error(wire.CodeUnavailable, msg) })
		}
	}
}

// writeLoop sends output from off on, from the in-memory window when it
// holds off and from the log on disk otherwise, until the session ends or the
// viewer leaves.
func (v *viewer) writeLoop(off uint64, l *outlog.Log) error {
	defer v.leave()
	var cur *outlog.Cursor
	defer func() {
		if cur != nil {
			cur.Close()
		}
	}()
	var buf []byte
	for {
		parts, end, exit, changed := v.h.window(off, viewerChunk)
		if len(parts) > 0 {
			n := 0
			for _, p := range parts {
				n += len(p)
			}
			if err := v.send(func(w *wire.Writer) error { return w.OutputParts(off, parts) }); err != nil {
				return err
			}
			off += uint64(n)
			continue
		}
		if off < end {
			// Behind the window: read the log on disk.
			if cur == nil {
				cur = l.Cursor(off)
				buf = make([]byte, viewerChunk)
			} else if cur.Offset() != off {
				cur.Seek(off)
			}
			n, err := cur.Read(buf[:min(uint64(len(buf)), end-off)])
			switch {
			case n > 0:
				if err := v.send(func(w *wire.Writer) error { return w.Output(off, buf[:n]) }); err != nil {
					return err
				}
				off += uint64(n)
				continue
			case errors.Is(err, outlog.ErrCompacted):
				l.Refresh()
				first := l.First()
				if first <= off {
					first = off + 1 // never loop: the log says compacted
				}
				first = min(first, end)
				if err := v.send(func(w *wire.Writer) error { return w.Gap(off, first) }); err != nil {
					return err
				}
				off = first
				continue
			case errors.Is(err, outlog.ErrCorrupt):
				// Damaged bytes are lost; say so and carry on after them.
				next := min(max(l.SkipCorrupt(off), off+1), end)
				v.h.log.Error("output log is damaged; skipping", "from", off, "to", next, "err", err)
				if err := v.send(func(w *wire.Writer) error { return w.Gap(off, next) }); err != nil {
					return err
				}
				off = next
				continue
			case err != nil && err != io.EOF:
				msg := "read output log: " + err.Error()
				v.send(func(w *wire.Writer) error { return w.Error(wire.CodeInternal, msg) })
				return err
			}
			// The log has not caught up with what the holder sent (it is
			// written first, so this is a refresh away); wait a moment.
			select {
			case <-v.gone:
				return nil
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		if exit != nil {
			e := *exit
			return v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeExit, e) })
		}
		select {
		case <-changed:
		case <-v.gone:
			return nil
		}
	}
}
