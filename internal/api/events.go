package api

import (
	"encoding/json"
	"time"
)

// Event is one entry of the server's event history, as `termkeep events
// --json` prints it and as the data of each event on the event stream
// (GET /v1/events, GET /api/events).
type Event struct {
	ID      int64           `json:"id"`
	At      time.Time       `json:"at"`
	Kind    string          `json:"kind"`    // session.created, viewer.attached, ...
	Session string          `json:"session"` // the session's id
	Detail  json.RawMessage `json:"detail"`  // a JSON object; its fields depend on Kind
}

// RenameRequest renames a session (PATCH /api/sessions/{ref}); "" removes
// its name.
type RenameRequest struct {
	Name *string `json:"name"`
}
