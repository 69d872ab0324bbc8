package vault

import (
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/vault/api"
)

// renewer keeps a renewable token alive with vault/api's LifetimeWatcher
// (which renews at about two thirds of the lease and, told to ignore
// errors, retries with backoff until the lease runs out), and counts the
// renewals.
type renewer struct {
	w       *api.LifetimeWatcher // nil: nothing to renew
	done    chan struct{}        // closed when the watch ends
	count   atomic.Uint64
	stopped atomic.Bool
	once    sync.Once
}

// startRenewer starts renewing the token described by lookup (the answer of
// auth/token/lookup-self) if it is renewable and expires; otherwise it
// returns a renewer that does nothing.
func startRenewer(client *api.Client, lookup *api.Secret, log *slog.Logger) *renewer {
	r := &renewer{done: make(chan struct{})}
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
	w, err := client.NewLifetimeWatcher(&api.LifetimeWatcherInput{
		Secret: &api.Secret{Auth: &api.SecretAuth{
			ClientToken: client.Token(), Renewable: true, LeaseDuration: int(ttl / time.Second),
		}},
		Increment:     int(increment / time.Second),
		RenewBehavior: api.RenewBehaviorIgnoreErrors,
	})
	if err != nil {
		log.Error("cannot renew the vault token: requests will fail once it expires", "error", err, "expires_in", ttl)
		close(r.done)
		return r
	}
	r.w = w
	go w.Start() // ends once the watcher sends on DoneCh, which watch reads
	go r.watch(log)
	return r
}

// watch counts renewals until the watcher ends, and says why it ended
// unless it was stopped.
func (r *renewer) watch(log *slog.Logger) {
	defer close(r.done)
	for {
		select {
		case err := <-r.w.DoneCh():
			switch {
			case r.stopped.Load():
			case err != nil:
				log.Error("vault token renewal failed; requests will fail once it expires", "error", err)
			default:
				log.Warn("vault token can no longer be renewed (its max TTL is near); requests will fail once it expires")
			}
			return
		case <-r.w.RenewCh():
			r.count.Add(1)
		}
	}
}

// stop ends the renewal and waits for it. Safe to call more than once.
func (r *renewer) stop() {
	r.once.Do(func() {
		r.stopped.Store(true)
		if r.w != nil {
			r.w.Stop()
		}
	})
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
