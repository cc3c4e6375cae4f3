package client

import (
	"context"

	"termkeep/internal/api"
)

// Stats returns the server's figures and each session's.
func (c *Client) Stats(ctx context.Context) (api.Stats, error) {
	var out api.Stats
	err := c.doJSON(ctx, "GET", "/v1/stats", nil, &out)
	return out, err
}
