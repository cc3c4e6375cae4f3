package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"termkeep/internal/api"
)

// Attacks on the browser listener with users' tokens: each is refused and
// changes nothing.

// NewToken makes an access token with `termkeep token create --json`.
func (w *WebEnv) NewToken(args ...string) api.TokenCreated {
	w.T.Helper()
	var t api.TokenCreated
	out := w.MustTk(append([]string{"token", "create", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &t); err != nil {
		w.T.Fatalf("token create --json printed %q: %v", out, err)
	}
	if t.Secret == "" || t.ID == "" || t.URL != w.Base+"/#token="+t.Secret {
		w.T.Fatalf("token create: %+v", t)
	}
	return t
}

// As returns the same env acting with another token.
func (w *WebEnv) As(secret string) *WebEnv {
	return &WebEnv{Env: w.Env, Base: w.Base, Token: secret}
}

// Do sends a request with auth as the Authorization header (none when
// empty) and returns the status and the body.
func (w *WebEnv) Do(method, path, auth string, body any, hdr ...string) (int, []byte) {
	w.T.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.Base+path, rd)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := NoRedirect.Do(req)
	if err != nil {
		w.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// NoRedirect is an HTTP client that returns redirects instead of
// following them.
var NoRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Bearer is the Authorization header value for a token.
func Bearer(secret string) string { return "Bearer " + secret }
