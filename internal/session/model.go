package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/replay"
	"termkeep/internal/screen"
	"termkeep/internal/session/catchup"
)

// CheckpointFile is the screen model's checkpoint in a session directory.
const CheckpointFile = "screen.ckpt"

// checkpointEvery is how much output passes between two checkpoints: a
// restarted server replays at most this much of the log per session.
const checkpointEvery = 4 << 20

// freezeMaxScrollback bounds the history of a screen that is frozen while
// its session is quiet (model.freeze): thawing one this size takes well
// under a millisecond; a longer one stays live, so a viewer's snapshot of
// it never waits for a thaw. It is no more than a replay checkpoint keeps,
// so a frozen screen is a replay checkpoint as it is (model.checkpoint).
const freezeMaxScrollback = replay.CheckpointScrollback

// model is a session's screen model: a headless terminal fed with the
// session's output by a goroutine of its own that follows the output like a
// viewer does (from the in-memory window, or the log when behind). Viewers
// never wait for it; a snapshot waits until the model has caught up with
// the offset it is asked for.
type model struct {
	h    *Host
	done chan struct{} // closed when the feeder returns

	mu  sync.Mutex // guards the fields below
	scr *screen.Screen
	// frozen is the screen marshalled (scr is nil then) while the session
	// is quiet and its history short: an idle shell's 200x50 grid is 80 KB
	// in memory, and half a kilobyte so. screenLocked thaws it.
	frozen     []byte
	frozenSize [2]int        // its cols and rows
	off        uint64        // the model reflects every byte below off
	progress   chan struct{} // closed and replaced whenever off moves
	sizes      []outlog.SizeChange
	ckptOff    uint64 // offset of the last checkpoint written
	// ckptStale is set when a size change at ckptOff was applied after
	// the checkpoint there was written: it lacks the change.
	ckptStale bool
	stopped   bool
	err       error     // why the feeder returned without a screen
	compacted time.Time // when the screen's history was last compacted
	marks     scrollMarks
}

// compactEvery is how often a busy screen's history is compacted: in a
// flood, most of it is gone before then and never compressed (the
// screen's scrollback); a session that prints slowly keeps a second's
// worth raw at most.
const compactEvery = time.Second

// startModel returns the host's model, first building it from the newest
// checkpoint (or the oldest retained byte) and starting its feeder when
// the host has none: at the first use, or again after CatchUp let an ended
// session's model go.
func (h *Host) startModel() *model {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.model == nil {
		h.model = &model{h: h, progress: make(chan struct{}), done: make(chan struct{})}
		go h.model.feed()
	}
	return h.model
}

// load prepares the model's starting point (catchup.Origin): a checkpoint
// when one is valid for the retained log, else an empty screen at the
// oldest retained byte. It tells waiters: a checkpoint at the end is all
// a request for an ended session waits for.
func (m *model) load(l *outlog.Log) {
	l.Refresh()
	first, end := l.First(), l.End()
	scr, off, err := replay.ReadCheckpoint(filepath.Join(m.h.dir, CheckpointFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		m.h.log.Warn("screen checkpoint unusable; rebuilding from the log", "err", err)
	}
	from, fromCkpt := catchup.Origin(catchup.Checkpoint{Off: off, OK: err == nil}, first, end)
	if err == nil && !fromCkpt {
		m.h.log.Info("screen checkpoint is outside the log; rebuilding from the log", "checkpoint", off, "first", first, "end", end)
	}
	if fromCkpt {
		m.scr = scr
	} else {
		cols, rows, serr := l.SizeAt(from)
		if serr != nil || cols == 0 {
			cols, rows = 80, 24
		}
		m.scr = screen.New(int(cols), int(rows), screen.Options{})
	}
	m.off, m.ckptOff = from, from
	m.movedLocked()
}

// movedLocked wakes everyone waiting for the model to move (at).
func (m *model) movedLocked() {
	close(m.progress)
	m.progress = make(chan struct{})
}

// addSizesLocked merges size changes into the pending list, in offset order
// (a repeated size is skipped when applied, so duplicates are harmless).
func (m *model) addSizesLocked(cs ...outlog.SizeChange) {
	m.sizes = append(m.sizes, cs...)
	slices.SortStableFunc(m.sizes, func(a, b outlog.SizeChange) int { return cmp.Compare(a.Offset, b.Offset) })
}

// addSize records a size change the holder reported live.
func (m *model) addSize(c outlog.SizeChange) {
	m.mu.Lock()
	m.addSizesLocked(c)
	m.mu.Unlock()
}

// feed applies the session's output to the model until the session has
// ended and every byte is applied, or the host is closed.
func (m *model) feed() {
	defer close(m.done)
	h := m.h
	l, err := h.outlog()
	if err != nil {
		h.log.Warn("screen model has no log", "err", err)
		m.mu.Lock()
		m.err = fmt.Errorf("session: the output log cannot be read, so there is no screen to show: %w", err)
		m.mu.Unlock()
		return
	}
	m.mu.Lock()
	m.load(l)
	m.mu.Unlock()

	var cur *outlog.Cursor
	defer func() {
		if cur != nil {
			cur.Close()
		}
	}()
	// The log is read only by a model behind the in-memory window (after a
	// burst, or at the start); the buffer and the cursor go once it has
	// caught up, so an idle session keeps neither.
	var buf []byte
	idle := time.NewTimer(idleAfter)
	defer idle.Stop()
	for {
		m.mu.Lock()
		off, stopped := m.off, m.stopped
		m.mu.Unlock()
		if stopped {
			return
		}
		parts, end, exit, changed := h.window(off, viewerChunk)
		if len(parts) > 0 {
			for _, p := range parts {
				m.apply(off, p)
				off += uint64(len(p))
			}
			continue
		}
		if off < end {
			if cur == nil {
				cur = l.Cursor(off)
				cur.TrackSizes()
				buf = make([]byte, outlog.ReadBuffer)
			} else if cur.Offset() != off {
				cur.Seek(off)
			}
			n, err := cur.Read(buf)
			// Bytes from the log carry their size changes with them
			// there; live ones arrive as Resized frames.
			if sizes := cur.TakeSizes(); len(sizes) > 0 {
				m.mu.Lock()
				m.addSizesLocked(sizes...)
				m.mu.Unlock()
			}
			var gap *outlog.GapError
			switch {
			case n > 0:
				m.apply(off, buf[:n])
			case errors.Is(err, outlog.ErrCompacted):
				l.Refresh()
				m.skip(max(l.First(), off+1))
			case errors.As(err, &gap):
				m.skip(gap.End)
			case errors.Is(err, outlog.ErrCorrupt):
				m.skip(min(max(l.SkipCorrupt(off), off+1), end))
			case err != nil && err != io.EOF:
				h.log.Warn("screen model: read log", "err", err)
				time.Sleep(100 * time.Millisecond) // a read error on disk: try again, with nothing to wait on
			default:
				if to, ok := h.unlogged(l, off); ok {
					m.skip(to)
					continue
				}
				// The log is a refresh behind the holder: a poll, as
				// nothing tells this process that the holder's file grew.
				time.Sleep(5 * time.Millisecond)
			}
			continue
		}
		if exit != nil {
			m.checkpoint(true)
			m.compact()
			m.freeze() // an ended session's screen changes no more
			return
		}
		if cur != nil {
			cur.Close()
			cur, buf = nil, nil
		}
		idle.Reset(idleAfter)
		select {
		case <-changed:
		case <-idle.C:
			h.shrinkWindow(idleWindow)
			m.compact()
			m.freeze()
		case <-h.closer.closed:
			return
		}
	}
}

// apply writes the bytes at [off, off+len(p)) into the model, applying any
// size change recorded at an offset inside them first.
func (m *model) apply(off uint64, p []byte) {
	m.mu.Lock()
	m.screenLocked()
	for len(p) > 0 {
		m.resizeToLocked(off)
		n := min(len(p), int(markEvery-off%markEvery)) // history.go
		if len(m.sizes) > 0 && m.sizes[0].Offset < off+uint64(n) {
			n = int(m.sizes[0].Offset - off)
		}
		m.write(off, p[:n])
		p = p[n:]
		off += uint64(n)
		if off%markEvery == 0 {
			m.marks.note(off)
		}
	}
	m.off = off
	m.movedLocked()
	if now := time.Now(); now.Sub(m.compacted) >= compactEvery { // real time: it paces the work, decides nothing
		m.scr.CompactScrollback()
		m.compacted = now
	}
	m.mu.Unlock()
	if off-m.ckptOffLocked() >= checkpointEvery {
		m.checkpoint(false)
	}
}

// write feeds the model (see isolate).
func (m *model) write(off uint64, p []byte) {
	cols, rows := m.scr.Size()
	scr, before := m.scr, m.scr.Scrolled()
	m.isolate(off, "write", cols, rows, func() { m.scr.Write(p) })
	if m.scr == scr {
		m.marks.total += m.scr.Scrolled() - before
	}
}

// resizeToLocked applies the pending size changes at or before off, each
// in turn: a shrink and a grow at one offset are two changes, and the
// shrink may have scrolled the screen. The screen must be thawed.
func (m *model) resizeToLocked(off uint64) {
	for len(m.sizes) > 0 && m.sizes[0].Offset <= off {
		sz := m.sizes[0]
		m.sizes = m.sizes[1:]
		if c, r := m.scr.Size(); c != int(sz.Cols) || r != int(sz.Rows) {
			m.resize(off, int(sz.Cols), int(sz.Rows))
			m.ckptStale = m.ckptStale || off == m.ckptOff
		}
	}
}

// resize resizes the model (see isolate): after a panic it starts again
// at the new size.
func (m *model) resize(off uint64, cols, rows int) {
	m.isolate(off, "resize", cols, rows, func() { m.scr.Resize(cols, rows) })
}

// isolate runs fn, a change of the model's screen at offset off, isolating
// the server from a defect in the emulator: a panic costs this session's
// rendered screen (it starts again blank, cols by rows, from the next
// byte), never the server or the session's output.
func (m *model) isolate(off uint64, what string, cols, rows int, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			m.h.log.Error("screen model failed; starting it again from the next byte", "in", what, "offset", off, "panic", r,
				"stack", string(debug.Stack()))
			m.scr = screen.New(cols, rows, screen.Options{})
		}
	}()
	fn()
}

func (m *model) ckptOffLocked() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ckptOff
}

// skip moves the model past bytes that are gone (retention or damage): the
// screen keeps what it had, the next bytes draw over it.
func (m *model) skip(to uint64) {
	m.mu.Lock()
	if to > m.off {
		m.off = to
		m.movedLocked()
	}
	m.mu.Unlock()
}

// compact compresses the screen's history, when the session is quiet.
func (m *model) compact() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.scr != nil {
		m.scr.CompactScrollback()
	}
}

// freeze marshals the screen and lets it go, when its history is short
// (freezeMaxScrollback): the feeder calls it once the session has been
// quiet a while. Output, a snapshot or a checkpoint thaws it.
func (m *model) freeze() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.scr == nil || m.scr.ScrollbackLines() > freezeMaxScrollback {
		return
	}
	data, err := m.scr.MarshalBinary()
	if err != nil {
		return
	}
	c, r := m.scr.Size()
	m.scr, m.frozen, m.frozenSize = nil, data, [2]int{c, r}
	m.marks.forget()
	idleMemory.freed(c * r * 8) // the grid's cells (host.go)
}

// screenLocked returns the screen, thawing a frozen one: nil only before
// the feeder has loaded it.
func (m *model) screenLocked() *screen.Screen {
	if m.scr == nil && m.frozen != nil {
		scr := new(screen.Screen)
		if err := scr.UnmarshalBinary(m.frozen); err != nil {
			// Never expected: these bytes came from MarshalBinary.
			m.h.log.Error("screen model: thaw", "err", err)
			scr = screen.New(m.frozenSize[0], m.frozenSize[1], screen.Options{})
		}
		m.scr, m.frozen = scr, nil
	}
	return m.scr
}

// stop ends the feeder.
func (m *model) stop() {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
}

// ErrStopping is returned to a request for the screen when the host is
// closed while it waits (the server is stopping).
var ErrStopping = errors.New("session: the server is stopping")

// at waits until the model has applied every byte below off, then calls fn
// with the screen and the offset it reflects. fn runs with the model
// locked: it must not block.
//
// It waits as long as the model takes: the model always moves towards the
// end of the output (bytes that will never be readable are skipped,
// catchup.Next), and a request that waits is better served late than
// told to try again. It returns early only when ctx ends (the client gave
// up) or the host is closed.
func (m *model) at(ctx context.Context, off uint64, fn func(scr *screen.Screen, off uint64)) error {
	for {
		fed := false // the feeder has returned: the model moves no more
		select {
		case <-m.done:
			fed = true
		default:
		}
		m.mu.Lock()
		if m.screenLocked() != nil && m.off >= off {
			// A size change at the model's offset takes effect now: the
			// screen a viewer sees next is drawn at that size.
			m.resizeToLocked(m.off)
			err := m.call(fn)
			m.mu.Unlock()
			return err
		}
		ch, reached, ferr := m.progress, m.off, m.err
		m.mu.Unlock()
		if fed {
			if ferr != nil {
				return ferr
			}
			return fmt.Errorf("session: the screen model stopped at byte %d of %d", reached, off)
		}
		select {
		case <-ch:
		case <-m.done:
		case <-ctx.Done():
			return fmt.Errorf("session: the screen model had reached byte %d of %d: %w", reached, off, context.Cause(ctx))
		case <-m.h.closer.closed:
			return ErrStopping
		}
	}
}

// call runs fn on the screen, turning an emulator panic into an error.
func (m *model) call(fn func(scr *screen.Screen, off uint64)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			m.h.log.Error("screen model failed to render", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("session: the screen model failed: %v", r)
		}
	}()
	fn(m.scr, m.off)
	return nil
}

// checkpoint writes the model to disk when enough output has passed (or
// always, with force, when there is anything new): screen.ckpt, which a
// restarted server starts from, and a replay checkpoint, which renders of
// the past start from (package replay).
func (m *model) checkpoint(force bool) {
	m.mu.Lock()
	// A checkpoint at off holds the size changes logged at off, as a
	// snapshot there does: a reader starting from it applies only those
	// after it (outlog.Log.Chunks), so one left pending here would be
	// lost, and one applied since the last checkpoint at off is worth
	// writing it again for.
	pending := len(m.sizes) > 0 && m.sizes[0].Offset <= m.off
	stale := m.off == m.ckptOff && (pending || m.ckptStale)
	if m.scr == nil && m.frozen == nil || m.off == m.ckptOff && !stale || (!force && m.off-m.ckptOff < checkpointEvery) {
		m.mu.Unlock()
		return
	}
	off := m.off
	if pending {
		m.screenLocked()
		m.resizeToLocked(off)
	}
	var file, trimmed []byte
	var err error
	if m.frozen != nil {
		// What MarshalBinary gave, of a screen with no more history than
		// a replay checkpoint keeps (freezeMaxScrollback).
		file, trimmed = replay.EncodeCheckpoint(off, m.frozen), m.frozen
	} else {
		var terr error
		err = m.call(func(scr *screen.Screen, _ uint64) {
			file = replay.AppendCheckpoint(nil, off, scr)
			trimmed, terr = scr.MarshalTrimmed(replay.CheckpointScrollback)
		})
		err = cmp.Or(err, terr)
	}
	if err == nil {
		m.ckptOff, m.ckptStale = off, false
	}
	m.mu.Unlock()
	if err == nil {
		err = replay.WriteCheckpointFile(filepath.Join(m.h.dir, CheckpointFile), file)
	}
	if err != nil {
		m.h.log.Warn("write screen checkpoint", "err", err)
		return
	}
	first := off
	if l, err := m.h.outlog(); err == nil {
		first = l.First()
	}
	if err := replay.SaveTrimmedCheckpoint(m.h.dir, off, trimmed, first); err != nil {
		m.h.log.Warn("write replay checkpoint", "err", err)
	}
}
