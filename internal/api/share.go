package api

// ShareRequest is the body of POST /api/sessions/{ref}/links: a share
// link that reaches that one session. Read-only unless Writable, so a
// request that says nothing gives the lesser access.
type ShareRequest struct {
	Name     string `json:"name,omitempty"`
	Writable bool   `json:"writable,omitempty"`
	// ExpiresIn is the link's lifetime in seconds; 0 means it never
	// expires.
	ExpiresIn int64 `json:"expires_in,omitempty"`
}

// Presence answers GET /api/sessions/{ref}/viewers: who watches a
// session, each viewer's size, and whose size the session has.
type Presence struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
	// SizeOwner is the id of the viewer whose size the session follows
	// (0: none).
	SizeOwner int      `json:"size_owner"`
	Viewers   []Viewer `json:"viewers"`
}

// Viewer is one viewer of a session. Kind is "owner" (the owner's own
// browser or token), "link" (a share link, named by its name or id),
// "user" (another user's token) or "cli" (termkeep attach). Only the
// owner is told the names of links and users.
type Viewer struct {
	ID        int    `json:"id"`
	Kind      string `json:"kind"`
	Name      string `json:"name,omitempty"`
	ReadOnly  bool   `json:"read_only"`
	Cols      int    `json:"cols,omitempty"`
	Rows      int    `json:"rows,omitempty"`
	HoldsSize bool   `json:"holds_size"`
}
