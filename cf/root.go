package cf

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// tokenURL reads GET / once and keeps {links.uaa or links.login}/oauth/token.
func (c *Client) tokenURL(ctx context.Context) (string, error) {
	c.uaaMu.Lock()
	defer c.uaaMu.Unlock()
	if c.uaaURL != "" {
		return c.uaaURL, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.api.String()+"/", nil)
	if err != nil {
		return "", fmt.Errorf("cloud controller: GET /: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	res, err := c.send(ctx, req, epRoot, smallAnswer)
	if err != nil {
		return "", err
	}
	if res.status != http.StatusOK {
		return "", ParseAPIError(epRoot, res.status, res.header, res.body)
	}
	var root struct {
		Links map[string]*struct {
			Href string `json:"href"`
		} `json:"links"`
	}
	if err := decode(epRoot, res.body, &root); err != nil {
		return "", err
	}
	href := ""
	for _, name := range []string{"uaa", "login"} {
		if l := root.Links[name]; l != nil && l.Href != "" && href == "" {
			href = l.Href
		}
	}
	u, err := c.trustedUAA(href)
	if err != nil {
		return "", err
	}
	c.uaaURL = u
	return u, nil
}

// trustedUAA refuses a UAA URL the client secret is not sent to: only https,
// or plain http on the API's own host and port when the API is plain http.
func (c *Client) trustedUAA(href string) (string, error) {
	u, err := url.Parse(href)
	switch {
	case href == "":
		return "", &unavailable{fmt.Errorf("cloud controller: GET / names no uaa or login link")}
	case err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("cloud controller: the UAA URL %q is not usable: %w", clean(href), ErrUnsafeLink)
	case u.Scheme == "https", u.Scheme == "http" && c.api.Scheme == "http" && c.sameOrigin(u):
		return strings.TrimSuffix(u.String(), "/") + "/oauth/token", nil
	}
	return "", fmt.Errorf("cloud controller: not sending the client secret to UAA %q: %w", clean(href), ErrUnsafeLink)
}
