package api

import "time"

// User is a user as `termkeep user ls --json` prints it. The owner (the OS
// user running the server) is always listed, first, with Owner set.
type User struct {
	Name      string     `json:"name"`
	Owner     bool       `json:"owner,omitempty"`
	CreatedAt *time.Time `json:"created_at,omitempty"` // nil for the owner
	// Tokens is how many of the user's tokens let requests in now.
	Tokens int `json:"tokens"`
}

// UserRequest adds a user (POST /v1/users).
type UserRequest struct {
	Name string `json:"name"`
}

// Me answers GET /api/me: who the request's token acts as and what it may
// do. Session and Workspace are the token's scope ("" = none); CanCreate is
// whether POST /api/sessions may succeed for it.
type Me struct {
	User      string `json:"user"`
	Owner     bool   `json:"owner"`
	ReadOnly  bool   `json:"read_only"`
	Session   string `json:"session"`
	Workspace string `json:"workspace"`
	CanCreate bool   `json:"can_create"`
}

// UserRemoved answers DELETE /v1/users/{name}: the tokens the removal
// revoked and the running sessions it closed (with force), by id.
type UserRemoved struct {
	Name           string   `json:"name"`
	TokensRevoked  []string `json:"tokens_revoked"`
	SessionsClosed []string `json:"sessions_closed"`
}

// Token states.
const (
	TokenActive  = "active"
	TokenExpired = "expired"
	TokenRevoked = "revoked"
)

// Token is an access token as the server shows it: never its secret.
type Token struct {
	ID          string     `json:"id"`
	Name        string     `json:"name,omitempty"`
	User        string     `json:"user"`
	Session     string     `json:"session,omitempty"`      // the one session it reaches, by id
	SessionName string     `json:"session_name,omitempty"` // that session's name now, if any
	Workspace   string     `json:"workspace,omitempty"`    // the one workspace it reaches
	ReadOnly    bool       `json:"read_only"`
	State       string     `json:"state"` // active, expired or revoked
	ExpiresAt   *time.Time `json:"expires_at"`
	CreatedAt   time.Time  `json:"created_at"`
	LastUsedAt  *time.Time `json:"last_used_at"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
}

// TokenRequest creates a token (POST /v1/tokens). Session and Workspace
// are exclusive.
type TokenRequest struct {
	Name string `json:"name,omitempty"`
	// User is whose sessions the token reaches; "" is the session's owner
	// when Session is set, else the owner.
	User      string `json:"user,omitempty"`
	Session   string `json:"session,omitempty"` // an id or a name
	Workspace string `json:"workspace,omitempty"`
	ReadOnly  bool   `json:"read_only,omitempty"`
	// ExpiresIn is the token's lifetime in seconds; 0 means it never
	// expires.
	ExpiresIn int64 `json:"expires_in,omitempty"`
}

// TokenCreated answers a TokenRequest: the token, its secret (shown this
// once: the server keeps only its hash) and, when the server listens for
// browsers, the address that logs a browser in with it.
type TokenCreated struct {
	Token
	Secret string `json:"secret"`
	URL    string `json:"url,omitempty"`
	// Warning says what a writable token can do (WritableWarning); ""
	// for a read-only one.
	Warning string `json:"warning,omitempty"`
}

// BrowserSession is a browser's sign-in as the server shows it: never its
// credential. From is "owner" for one made from the owner token, else the
// id of the registry token it was made from.
type BrowserSession struct {
	ID         string     `json:"id"`
	User       string     `json:"user"`
	From       string     `json:"from"`
	TokenName  string     `json:"token_name,omitempty"`
	Label      string     `json:"label"`
	State      string     `json:"state"` // active, expired or revoked
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt time.Time  `json:"last_used_at"`
	ExpiresAt  time.Time  `json:"expires_at"` // if unused until then
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	// Current: the request that listed it came with this credential.
	Current bool `json:"current,omitempty"`
}

// BrowserSignIn answers POST /api/browser-sessions: the sign-in and its
// credential, shown this once.
type BrowserSignIn struct {
	BrowserSession
	Credential string `json:"credential"`
}

// WritableWarning is said wherever a writable token or a user is made.
// Sessions run as the server's OS user, whoever created them, so a token
// that can type into one can read the owner token file, the registry and
// everything else of the owner's: users and tokens are access scopes, not
// a sandbox.
const WritableWarning = "a writable token can do anything the owner's shell can (its sessions run as the server's user, which can read the owner token)"
