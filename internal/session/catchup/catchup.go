// Package catchup decides how a session's screen model reaches the end of
// the session's output: where the model of a starting server begins, which
// models the server brings up to date before anyone asks, and what a model
// does when the log has no byte at its offset. The host reads the
// checkpoint and the log and does what is decided; nothing here does I/O,
// and every decision is the same for the same input.
package catchup

// Checkpoint is what the host found of a session's screen checkpoint.
type Checkpoint struct {
	Off uint64 // the offset the saved screen reflects
	OK  bool   // a checkpoint file exists and was readable
}

// Origin returns where the model starts for a log that holds [first, end):
// at the checkpoint when it belongs to that range, else on an empty screen
// at first. A checkpoint before first is older than what retention kept
// (the bytes after it are gone); one past end was made from more output
// than the log holds (a log cut short by damage or a lost segment), and
// starting there would leave the model waiting for bytes that never come.
func Origin(c Checkpoint, first, end uint64) (from uint64, fromCheckpoint bool) {
	if c.OK && c.Off >= first && c.Off <= end {
		return c.Off, true
	}
	return min(first, end), false
}

// WarmAbove is how much output a model may have to replay at its first
// request without the server catching it up at start: about 10 ms of the
// emulator's time (100 MB/s and more, docs/PERFORMANCE.md), which a
// request can wait. Beyond it the server replays in the background as
// soon as it starts, so the first request finds the screen ready.
const WarmAbove = 1 << 20

// Warm reports whether a starting server should bring the screen model of
// an ended session up to the end of its log, and write its checkpoint
// there, before anyone asks: when the model would otherwise replay more
// than WarmAbove at its first request. A session that ended while no
// server ran has a checkpoint behind its end (or none); one that ended
// under a server has it at its end, and its first request costs the
// reading of the checkpoint alone.
func Warm(c Checkpoint, first, end uint64) bool {
	from, _ := Origin(c, first, end)
	return end-from > WarmAbove
}

// AtLogEnd is what the model knows when the log has no byte at its offset
// though the output goes on: the session's bytes [Off, End) are neither
// in the log nor in the in-memory window.
type AtLogEnd struct {
	Off    uint64 // the model has applied every byte below Off
	End    uint64 // the end of the session's output, as the server knows it
	LogEnd uint64 // the log's end, read afresh
	// Ended: the session has ended, so its holder is gone and its log will
	// grow no more.
	Ended bool
	// LogStopped: the holder stopped logging (a full disk) at StoppedAt;
	// what it printed since reaches the server alone.
	LogStopped bool
	StoppedAt  uint64
	// Window is the in-memory window of recent output, [WindowFirst,
	// WindowEnd); empty when they are equal.
	WindowFirst, WindowEnd uint64
}

// Step is what the model does next.
type Step struct {
	// Wait: the log is behind what the holder sent (it is written first,
	// so a refresh will show it): try again in a moment.
	Wait bool
	// SkipTo: the bytes below it will never be readable; the model moves
	// past them with the screen as it is, and the next bytes draw over it.
	SkipTo uint64
}

// Next decides what the model does when the log has no byte at s.Off.
//
// Bytes the holder did not log are lost to a model this far behind: while
// the log is stopped, up to the window's first byte; after the session
// ended, up to the window, or to the end when the window does not hold
// them (a holder whose log could not resume before it exited leaves its
// last bytes unlogged; meta.json's end counts them). Anything else is a
// log a refresh behind its holder, and worth waiting for: only a running
// session's log still grows.
func Next(s AtLogEnd) Step {
	if s.Off >= s.End || s.LogEnd > s.Off {
		return Step{Wait: true} // nothing to skip, or bytes to read after all
	}
	// The window holds bytes after the model's, within the output.
	window := s.WindowFirst < s.WindowEnd && s.WindowFirst > s.Off && s.WindowFirst < s.End
	switch {
	case s.LogStopped && s.Off >= s.StoppedAt && window:
		return Step{SkipTo: s.WindowFirst}
	case s.Ended && window:
		return Step{SkipTo: s.WindowFirst}
	case s.Ended:
		return Step{SkipTo: s.End}
	}
	return Step{Wait: true}
}
