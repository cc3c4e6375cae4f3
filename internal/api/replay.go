package api

// The replay endpoints (docs/protocol.md, Replay): times are Unix
// milliseconds, named t; offsets are byte offsets of the session's output.

// ReplayTimeline is GET /v1/sessions/{ref}/replay: what a player needs to
// draw a session's timeline.
type ReplayTimeline struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	First  uint64 `json:"first_offset"` // the oldest retained byte
	End    uint64 `json:"end_offset"`   // one past the newest logged byte
	StartT int64  `json:"start_t"`      // when First was logged
	EndT   int64  `json:"end_t"`        // when the newest byte was logged
	Cols   int    `json:"cols"`         // the size at First
	Rows   int    `json:"rows"`
	// Points is the log's time index, ascending, at most 4096 (evenly
	// thinned, the first and last kept).
	Points []ReplayPoint `json:"points"`
	// Markers are ascending by offset, at most 10,000 (the newest).
	Markers []ReplayMarker `json:"markers"`
}

// ReplayPoint says the byte at Offset was logged at T.
type ReplayPoint struct {
	Offset uint64 `json:"offset"`
	T      int64  `json:"t"`
}

// Kinds of ReplayMarker.
const (
	MarkerCommand = "command" // OSC 133 C: Label is the command line typed ("" when none)
	MarkerDone    = "done"    // OSC 133 D: Status is its exit status, when the mark carries one
	MarkerRestore = "restore" // a mark record (a restore's banner): Label is its text
	MarkerGap     = "gap"     // bytes that cannot be read: End is the first offset after them, Label why
)

// ReplayMarker is a moment of a session worth jumping to.
type ReplayMarker struct {
	Offset uint64  `json:"offset"`
	T      int64   `json:"t"`
	Kind   string  `json:"kind"`
	Label  *string `json:"label,omitempty"`  // command, restore, gap
	Status *int    `json:"status,omitempty"` // done
	End    *uint64 `json:"end,omitempty"`    // gap
}

// Headers of GET /v1/sessions/{ref}/replay/screen.
const (
	// HeaderOffset is N: the screen reflects every byte below N.
	HeaderOffset = "Termkeep-Offset"
	// HeaderTime is the moment's Unix ms: the time asked for, or else when
	// the byte at N-1 was logged.
	HeaderTime = "Termkeep-Time"
	// HeaderSize is the screen's size, COLSxROWS.
	HeaderSize = "Termkeep-Size"
)

// ReplayStep is one line of GET /v1/sessions/{ref}/replay/output, which
// is one of:
//
//   - a size: Offset, T, Cols and Rows (always the first line, then at
//     each change);
//   - a chunk: Offset, T and Data (the bytes, base64 in JSON);
//   - a gap: Offset, T, End and Gap (the reason);
//   - the last line: Next and Done.
type ReplayStep struct {
	Offset *uint64 `json:"offset,omitempty"`
	T      *int64  `json:"t,omitempty"`
	Cols   int     `json:"cols,omitempty"`
	Rows   int     `json:"rows,omitempty"`
	Data   []byte  `json:"data,omitempty"`
	End    *uint64 `json:"end,omitempty"`
	Gap    string  `json:"gap,omitempty"`
	Next   *uint64 `json:"next,omitempty"`
	Done   *bool   `json:"done,omitempty"`
}
