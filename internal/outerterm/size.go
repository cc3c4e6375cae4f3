package outerterm

import (
	"bytes"

	"termkeep/internal/screen"
)

// Fill marks the part of the terminal beyond the session's size, as tmux
// marks the area beyond a window's.
const Fill = '·'

// A terminal whose size is the session's gets the session's bytes as
// they are (Output): that is exact and cheap, and keeps the history in
// the terminal's own scrollback. A terminal of another size cannot: a byte
// stream made for 100 columns wraps, scrolls and addresses rows wrongly
// on 60, and leaves the columns past 60 stale on 100 after the session
// shrank. So while the sizes differ the Term draws from a screen model of
// its own at the session's size instead (screen.Viewport): the session's
// screen clipped to the terminal, the rest marked with Fill, every cell
// written at each paint. The model is fed only then (an emulator pass
// over every byte costs more than attach's own work): when the sizes
// start to differ the Term asks for a snapshot (Redraw), which the model
// starts from. When the sizes agree again, the model's screen is drawn
// once and the bytes flow through again.

// Session records the session's size (a welcome, a viewers frame), and
// returns what brings the terminal in line with it.
func (t *Term) Session(cols, rows int) []byte {
	if cols < 1 || rows < 1 {
		return nil
	}
	was := t.rendered()
	if t.model == nil {
		t.fed = false
		t.model = screen.New(cols, rows, screen.Options{ScrollbackLines: -1})
	} else if cols != t.scols || rows != t.srows {
		t.model.Resize(cols, rows)
	}
	t.scols, t.srows = cols, rows
	return t.settle(was)
}

// Size returns the terminal's size.
func (t *Term) Size() (cols, rows int) { return t.cols, t.rows }

// SessionSize returns the session's size as last recorded (0x0: unknown).
func (t *Term) SessionSize() (cols, rows int) { return t.scols, t.srows }

// Resize records the terminal's new size, and returns what brings the
// terminal in line with the session's.
func (t *Term) Resize(cols, rows int) []byte {
	was := t.rendered()
	t.cols, t.rows = max(cols, 1), max(rows, 1)
	if t.rendered() {
		t.dirty = true // a resized terminal keeps nothing in place
	}
	return t.settle(was)
}

// Rendered reports whether the terminal is drawn from the model: the
// session's size is known and not the terminal's.
func (t *Term) Rendered() bool { return t.rendered() }

func (t *Term) rendered() bool {
	return t.model != nil && t.drew && (t.scols != t.cols || t.srows != t.rows)
}

// settle returns what a change of either size calls for: a paint from the
// model while the sizes differ, the model's screen drawn once when they
// agree again.
func (t *Term) settle(was bool) []byte {
	switch now := t.rendered(); {
	case now && !t.fed:
		t.Redraw = true // the model starts from a snapshot
		return nil
	case now:
		t.dirty = true
		return t.Paint()
	case was:
		// Back to the bytes as they are: the terminal must first be in the
		// state the model is in.
		var b []byte
		if t.alt != 0 && !t.model.AltScreen() && !t.altScreen {
			b = append(b, "\x1b[?1049l"...)
			t.alt = 0
		}
		if !t.fed {
			return b // the snapshot asked for draws it
		}
		b = append(b, t.drawSnapshot(t.model.Snapshot(0))...)
		t.fed = t.track
		return b
	}
	return nil
}

// Paint returns the model's screen drawn on the terminal, when the
// terminal is drawn from the model and the screen changed since the last
// paint; else nothing. attach calls it at most every few milliseconds
// while output flows: a paint writes every cell.
func (t *Term) Paint() []byte {
	if !t.rendered() || !t.dirty || !t.fed {
		return nil
	}
	t.dirty = false
	b := t.model.Viewport(t.cols, t.rows, Fill)
	t.m.scan(b)
	return b
}

// Dirty reports whether a Paint is due.
func (t *Term) Dirty() bool { return t.rendered() && t.dirty && t.fed }

// feed gives the model the session's bytes, while it follows them.
func (t *Term) feed(p []byte) {
	if t.model != nil && t.fed {
		t.model.Write(p)
		t.dirty = true
	}
}

// isSnapshotStart reports whether snapshot data begins a snapshot (a
// reset) rather than continuing one split over frames.
func isSnapshotStart(p []byte) bool { return bytes.HasPrefix(p, []byte("\x1bc")) }
