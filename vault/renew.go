package vault

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/vault/api"
)

// renewer renews a renewable token when two thirds of its TTL have passed,
// until stopped or until the token cannot be renewed any more.
type renewer struct {
	cancel context.CancelFunc
	done   chan struct{}
	count  atomic.Uint64
	once   sync.Once
}

// startRenewer starts renewing the token described by lookup (the answer of
// auth/token/lookup-self) if it is renewable and expires; otherwise it
// returns a renewer that does nothing.
func startRenewer(client *api.Client, lookup *api.Secret, log *slog.Logger) *renewer {
	ctx, cancel := context.WithCancel(context.Background())
	r := &renewer{cancel: cancel, done: make(chan struct{})}
	ttl := secondsField(lookup, "ttl")
	renewable, _ := lookup.Data["renewable"].(bool)
	if !renewable || ttl <= 0 {
		if ttl > 0 {
			log.Warn("vault token is not renewable: requests will fail once it expires", "expires_in", ttl)
		}
		close(r.done)
		return r
	}
	increment := secondsField(lookup, "creation_ttl")
	if increment <= 0 {
		increment = ttl
	}
	go r.run(ctx, client, ttl, increment, log)
	return r
}

// run renews the token, asking each time for increment (the TTL the token
// was created with).
func (r *renewer) run(ctx context.Context, client *api.Client, ttl, increment time.Duration, log *slog.Logger) {
	defer close(r.done)
	expires := time.Now().Add(ttl)
	wait := ttl * 2 / 3
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		sec, err := client.Auth().Token().RenewSelfWithContext(ctx, int(increment/time.Second))
		if err != nil || sec == nil || sec.Auth == nil {
			left := time.Until(expires)
			if ctx.Err() != nil {
				return
			}
			if left <= 0 {
				log.Error("vault token expired, renewal failed", "error", err)
				return
			}
			log.Warn("renewing the vault token failed, retrying", "error", err, "expires_in", left)
			wait = max(left/3, 200*time.Millisecond)
			continue
		}
		r.count.Add(1)
		ttl = time.Duration(sec.Auth.LeaseDuration) * time.Second
		if !sec.Auth.Renewable || ttl <= 0 {
			log.Warn("vault token can no longer be renewed", "ttl", ttl)
			return
		}
		expires = time.Now().Add(ttl)
		wait = ttl * 2 / 3
	}
}

// stop ends the renewal and waits for it. Safe to call more than once.
func (r *renewer) stop() {
	r.once.Do(r.cancel)
	<-r.done
}

func secondsField(s *api.Secret, key string) time.Duration {
	if s == nil {
		return 0
	}
	n, ok := s.Data[key].(json.Number)
	if !ok {
		return 0
	}
	v, err := n.Int64()
	if err != nil {
		return 0
	}
	return time.Duration(v) * time.Second
}
