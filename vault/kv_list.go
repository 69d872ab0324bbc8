package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/hashicorp/vault/api"
)

// list returns the names under the folder p (folders end in "/"); none when
// the folder does not exist.
func (k *kv) list(ctx context.Context, p string) ([]string, error) {
	k.reads.Add(1)
	target := k.dataPath(p)
	if k.version == 2 {
		target = k.metadataPath(p)
	}
	raw, found, err := k.get(ctx, strings.TrimSuffix(target, "/"), url.Values{"list": {"true"}})
	if err == nil && !found {
		if _, err = k.absent(raw); err == nil {
			return nil, nil
		}
	}
	var keys []string
	if err == nil {
		keys, err = decodeKeys(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", k.display(p), err)
	}
	return keys, nil
}

// decodeKeys parses the body of a LIST answer.
func decodeKeys(raw []byte) ([]string, error) {
	var b struct {
		Data struct {
			Keys []string `json:"keys"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("%w: unparseable list: %s", ErrCorrupt, snippet(raw))
	}
	return b.Data.Keys, nil
}

// drain reads what is left of a response and closes it, so that its
// connection goes back to the pool instead of being closed (a cold reconcile
// writes tens of thousands of documents).
func drain(resp *api.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}
