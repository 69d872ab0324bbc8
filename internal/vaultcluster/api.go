package vaultcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// apiClient sends the harness's own requests; each carries its context's
// deadline, and no connection is kept to a node that may be killed.
var apiClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// Do sends a request to base (a node's Addr or the balancer's) with the
// cluster's root token and returns the status and at most 1 MiB of body.
func (c *Cluster) Do(ctx context.Context, base, method, path, body string) (int, []byte, error) {
	return do(ctx, base, c.Token, method, path, body)
}

// do sends one request with token (none when empty).
func do(ctx context.Context, base, token, method, path, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewBufferString(body))
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("X-Vault-Token", token)
	}
	resp, err := apiClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, out, err
}

// initialize runs sys/init on n with one key share and returns the unseal
// key and the root token.
func initialize(ctx context.Context, n *Node) (key, token string, err error) {
	status, body, err := do(ctx, n.Addr, "", http.MethodPut, "/v1/sys/init", `{"secret_shares":1,"secret_threshold":1}`)
	if err != nil {
		return "", "", fmt.Errorf("sys/init on %s: %w", n.ID, err)
	}
	var out struct {
		Keys      []string `json:"keys_base64"`
		RootToken string   `json:"root_token"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &out) != nil || len(out.Keys) != 1 || out.RootToken == "" {
		return "", "", fmt.Errorf("sys/init on %s: %d %s", n.ID, status, body)
	}
	return out.Keys[0], out.RootToken, nil
}

// unseal gives n the unseal key until it says it is unsealed, at most as
// long as ctx allows: a node that has not yet joined the cluster through
// retry_join takes the key once it has.
func unseal(ctx context.Context, n *Node, key string) error {
	var last string
	for {
		status, body, err := do(ctx, n.Addr, "", http.MethodPut, "/v1/sys/unseal", fmt.Sprintf(`{"key":%q}`, key))
		var out struct {
			Sealed *bool `json:"sealed"`
		}
		if err == nil && status == http.StatusOK && json.Unmarshal(body, &out) == nil && out.Sealed != nil && !*out.Sealed {
			return nil
		}
		last = fmt.Sprintf("%d %s %v", status, body, err)
		if err := retry.Sleep(ctx, 250*time.Millisecond); err != nil {
			return fmt.Errorf("unsealing %s: %w (last answer: %s)", n.ID, err, last)
		}
	}
}
