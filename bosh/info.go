package bosh

import (
	"context"
	"fmt"
	"net/http"

	"github.com/cloudfoundry-community/gogobosh"
)

// Info returns the Director's GET /info, which needs no credentials.
func (c *Client) Info(ctx context.Context) (gogobosh.Info, error) { return c.conn.info(ctx) }

// info is GET /info, which the authentication's detection reads too.
func (c *conn) info(ctx context.Context) (gogobosh.Info, error) {
	r := request{method: http.MethodGet, path: "/info", endpoint: epInfo}
	req, err := c.newRequest(ctx, r)
	if err != nil {
		return gogobosh.Info{}, err
	}
	res, err := c.send(ctx, req, r.endpoint)
	if err != nil {
		return gogobosh.Info{}, fmt.Errorf("getting info: %w", err)
	}
	if res.status != http.StatusOK {
		return gogobosh.Info{}, fmt.Errorf("getting info: %w", parseAPIError(c.name, r.method, r.path, res.status, res.body))
	}
	info, err := parseInfo(res.body)
	if err != nil {
		return gogobosh.Info{}, fmt.Errorf("getting info: bosh director %q: %w", c.name, err)
	}
	return info, nil
}

// parseInfo decodes the Director's answer to GET /info.
func parseInfo(body []byte) (gogobosh.Info, error) {
	var info gogobosh.Info
	if err := decodeJSON(body, &info); err != nil {
		return gogobosh.Info{}, fmt.Errorf("decoding /info: %w", err)
	}
	return info, nil
}
