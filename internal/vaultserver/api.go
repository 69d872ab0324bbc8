package vaultserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// Do sends an authenticated request to the server's HTTP API, e.g.
// Do("POST", "/v1/sys/mounts/kv1", `{"type":"kv","options":{"version":"1"}}`).
func (s *Server) Do(method, path, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, s.Addr+path, bytes.NewBufferString(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Vault-Token", s.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, err = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.Bytes(), err
}

// EnableKV mounts a KV secrets engine of the given version (1 or 2) at path.
func (s *Server) EnableKV(path string, version int) error {
	body := fmt.Sprintf(`{"type":"kv","options":{"version":"%d"}}`, version)
	code, out, err := s.Do(http.MethodPost, "/v1/sys/mounts/"+path, body)
	if err != nil {
		return err
	}
	if code/100 != 2 {
		return fmt.Errorf("mounting kv v%d at %s: %d %s", version, path, code, out)
	}
	if version == 2 {
		return s.waitKV2(path)
	}
	return nil
}

// waitKV2 waits until a new KV v2 mount has finished its upgrade and
// accepts writes, asking every 50 ms, at most 10 s.
func (s *Server) waitKV2(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		code, _, err := s.Do(http.MethodGet, "/v1/"+path+"/config", "")
		if err == nil && code == http.StatusOK {
			return nil
		}
		if retry.Sleep(ctx, 50*time.Millisecond) != nil {
			return fmt.Errorf("kv v2 mount %s not ready", path)
		}
	}
}

// Seal seals the server (every later request fails with a sealed error).
func (s *Server) Seal() error {
	code, out, err := s.Do(http.MethodPut, "/v1/sys/seal", "")
	if err != nil {
		return err
	}
	if code/100 != 2 {
		return fmt.Errorf("sealing: %d %s", code, out)
	}
	return nil
}
