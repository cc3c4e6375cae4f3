package session

import (
	"context"

	"termkeep/internal/screen"
	"termkeep/internal/wire"
)

// A fresh viewer that asks for its screen first (wire.Hello.ScreenFirst:
// termkeep attach) is sent the screen alone, then its history in a second
// snapshot, a screen.SnapshotKeep that erases the screen drawn, draws the
// lines of history (which scroll into the terminal's own) and the screen
// again. The screen is what its user waits for: the history of a long
// session is most of a snapshot's bytes, and the terminal draws the screen
// only after all of them.

// snapshotLines decides the history of a fresh viewer's snapshots: the
// lines the first carries, and the lines a second one follows it with
// (0: none follows).
func snapshotLines(hello wire.Hello) (first, after int) {
	n := max(hello.Scrollback, 0)
	if hello.ScreenFirst {
		return 0, n
	}
	return n, 0
}

// historySnapshot is the second snapshot of a viewer sent its screen first
// at offset least at cols×rows: SnapshotKeep with up to scrollback lines of
// history, at an offset at least least (output that came in between is in
// it, and the stream goes on from its offset). ok is false when the
// session's size changed in between: the viewer was told the first size,
// and goes without the history rather than be drawn at another.
func (h *Host) historySnapshot(ctx context.Context, least uint64, scrollback int, cols, rows uint16) (data []byte, off uint64, ok bool, err error) {
	m := h.startModel()
	err = m.at(ctx, least, func(scr *screen.Screen, at uint64) {
		if c, r := scr.Size(); c != int(cols) || r != int(rows) {
			return
		}
		data, off, ok = scr.SnapshotKeep(scrollback), at, true
	})
	return data, off, ok, err
}
