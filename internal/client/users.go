package client

import (
	"context"
	"net/url"

	"termkeep/internal/api"
)

// Users returns the owner and every user added with AddUser.
func (c *Client) Users(ctx context.Context) ([]api.User, error) {
	var out []api.User
	err := c.doJSON(ctx, "GET", "/v1/users", nil, &out)
	return out, err
}

// AddUser records a user, who then may be given tokens.
func (c *Client) AddUser(ctx context.Context, name string) (api.User, error) {
	var out api.User
	err := c.doJSON(ctx, "POST", "/v1/users", api.UserRequest{Name: name}, &out)
	return out, err
}

// RemoveUser removes a user and revokes its tokens, which ends their
// viewers and event streams. A user who owns running sessions is refused
// unless force, which closes them.
func (c *Client) RemoveUser(ctx context.Context, name string, force bool) (api.UserRemoved, error) {
	var out api.UserRemoved
	path := "/v1/users/" + url.PathEscape(name)
	if force {
		path += "?force=1"
	}
	err := c.doJSON(ctx, "DELETE", path, nil, &out)
	return out, err
}

// Tokens returns every access token, revoked and expired ones included;
// never their secrets.
func (c *Client) Tokens(ctx context.Context) ([]api.Token, error) {
	var out []api.Token
	err := c.doJSON(ctx, "GET", "/v1/tokens", nil, &out)
	return out, err
}

// CreateToken makes an access token. The answer carries its secret, which
// the server does not keep: it cannot be shown again.
func (c *Client) CreateToken(ctx context.Context, req api.TokenRequest) (api.TokenCreated, error) {
	var out api.TokenCreated
	err := c.doJSON(ctx, "POST", "/v1/tokens", req, &out)
	return out, err
}

// RevokeToken revokes a token by id; the server also ends its requests in
// flight (viewers, event streams).
func (c *Client) RevokeToken(ctx context.Context, id string) (api.Token, error) {
	var out api.Token
	err := c.doJSON(ctx, "DELETE", "/v1/tokens/"+url.PathEscape(id), nil, &out)
	return out, err
}

// BrowserSessions lists the browsers signed in with a credential of their
// own, revoked and expired ones included.
func (c *Client) BrowserSessions(ctx context.Context) ([]api.BrowserSession, error) {
	var out []api.BrowserSession
	err := c.doJSON(ctx, "GET", "/v1/browser-sessions", nil, &out)
	return out, err
}

// RevokeBrowserSession revokes a browser's credential, ending its viewers
// and event streams.
func (c *Client) RevokeBrowserSession(ctx context.Context, id string) (api.BrowserSession, error) {
	var out api.BrowserSession
	err := c.doJSON(ctx, "DELETE", "/v1/browser-sessions/"+url.PathEscape(id), nil, &out)
	return out, err
}
