package api

import (
	"fmt"
	"time"
)

// Headers of an export (GET /v1/sessions/{ref}/export) and a grep.
const (
	// HeaderExportFrom and HeaderExportTo are the range of offsets an
	// export covers, [from, to), with times and defaults resolved.
	HeaderExportFrom = "Termkeep-Export-From"
	HeaderExportTo   = "Termkeep-Export-To"
	// HeaderProgress is "DONE/TOTAL": how many bytes of log an export has
	// worked through, of how many. It is on the 102 (Processing) answers
	// an export sends while it works before its first byte (a txt or html
	// export, which is written at the end, or a redacted cast's first
	// pass), and on its final answer, which says where the body starts.
	HeaderProgress = "Termkeep-Progress"
	// HeaderError is a trailer of an export or grep that failed after its
	// answer began.
	HeaderError = "Termkeep-Error"
	// HeaderLinesLeftOut is a trailer of a txt or html export: how many of
	// the oldest lines of history it left out, over its max_lines (a line
	// at its top says so too).
	HeaderLinesLeftOut = "Termkeep-Lines-Left-Out"
)

// FormatProgress writes a HeaderProgress value.
func FormatProgress(done, total uint64) string { return fmt.Sprintf("%d/%d", done, total) }

// ParseProgress reads a HeaderProgress value.
func ParseProgress(h string) (done, total uint64, ok bool) {
	_, err := fmt.Sscanf(h, "%d/%d", &done, &total)
	return done, total, err == nil
}

// GrepHit is one line `termkeep grep` found, as GET
// /v1/sessions/{ref}/grep streams them (one JSON object per line) and
// `termkeep grep --json` prints them.
//
// Offset and End bound the bytes that drew the line's first match, and
// Time is when the last of them was logged: a screen at End shows the
// match whole (its line may have begun long before, at a prompt).
type GrepHit struct {
	Offset uint64 `json:"offset"` // of the match's first byte
	End    uint64 `json:"end"`    // after the match's last byte
	// Shown is the end of the log chunk holding the match's last byte: a
	// moment a terminal showed (a screen at End may cut a chunk short).
	Shown uint64     `json:"shown,omitempty"`
	Time  *time.Time `json:"time"`        // when the match's last byte was logged; null when the log does not say
	T     *int64     `json:"t,omitempty"` // the same in Unix ms, absent when the log does not say
	Line  string     `json:"line"`        // the whole line's text, escape sequences left out
}
