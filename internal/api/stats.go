package api

import "time"

// Stats answers GET /v1/stats (and /api/stats on the browser listener):
// the server and each session the caller may see, as `termkeep stats
// --json` prints it.
type Stats struct {
	Version       string    `json:"version"`
	Pid           int       `json:"pid"`
	StartedAt     time.Time `json:"started_at"`
	UptimeSeconds float64   `json:"uptime_seconds"`
	// Ready is whether the server had finished starting (its registry open
	// and the sessions that were running picked up) when it answered.
	Ready    bool           `json:"ready"`
	Sessions []SessionStats `json:"sessions"`
}

// SessionStats is one session's figures.
type SessionStats struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	State     string    `json:"state"`
	Workspace string    `json:"workspace"`
	CreatedAt time.Time `json:"created_at"`
	// UptimeSeconds runs from the session's creation to now, or to its end.
	UptimeSeconds float64 `json:"uptime_seconds"`
	// LastActivity is the later of its last output and its last input as
	// this server saw them (from when the server took the session up).
	LastActivity time.Time `json:"last_activity"`
	Viewers      int       `json:"viewers"`
	// BytesOut is all the output the session has printed since it began
	// (its end offset: it survives server restarts). BytesIn is the input
	// written to it since this server took it up (input is not logged).
	BytesOut uint64 `json:"bytes_out"`
	BytesIn  uint64 `json:"bytes_in"`
	// LogBytes is what its output log takes on disk (segment files; the
	// figure may be up to 10 seconds old).
	LogBytes int64  `json:"log_bytes"`
	Resyncs  uint64 `json:"resyncs"`
}
