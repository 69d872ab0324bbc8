package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// prefetch is a read of an instance's metadata and manifest started beside
// the Director fetch. Its goroutine is the updater's (updater.reads): whoever
// drops a prefetch unused stops it.
type prefetch struct {
	done   chan struct{}
	cancel context.CancelFunc
	have   current
	err    error
}

// stop cancels a prefetch whose read nobody will use and waits for it; a
// nil prefetch is fine.
func (p *prefetch) stop() {
	if p == nil {
		return
	}
	p.cancel()
	<-p.done
}

// prefetch starts reading the records of an instance that the index does
// not hold (a cold or restore run: they must be read before they are
// written) so that the read is hidden behind the Director's latency; nil
// when the index holds the instance (its fingerprint may spare the read).
// Whether Vault may hold them at all is asked in the same goroutine, so
// that the Director fetch never waits for the run's one listing of Vault.
func (u *updater) prefetch(ctx context.Context, id string) *prefetch {
	if u.index[id] != nil {
		return nil
	}
	rctx, cancel := context.WithCancel(ctx)
	p := &prefetch{done: make(chan struct{}), cancel: cancel}
	u.reads.Add(1)
	go func() {
		defer u.reads.Done()
		defer close(p.done)
		// The run's one listing takes the run's context: stopping this read
		// must not cancel it for every other instance.
		if u.stored.mayHold(ctx, id) { // else nothing to read: the instance is new to Vault
			p.have, p.err = u.readCurrent(rctx, id)
		}
	}()
	return p
}

// current returns what Vault holds of the instance: the prefetched read
// the first time when there is one, else a new read.
func (u *updater) current(ctx context.Context, w *update) (current, error) {
	if p := w.prefetched; p != nil {
		w.prefetched = nil // a retry reads again
		select {
		case <-p.done:
			p.cancel()
			if p.err == nil {
				return p.have, nil
			}
		case <-ctx.Done():
			p.stop()
			return current{}, ctx.Err()
		}
	}
	return u.readCurrent(ctx, w.match.InstanceID)
}

// readCurrent reads an instance's metadata and manifest at once.
func (u *updater) readCurrent(ctx context.Context, id string) (current, error) {
	var have current
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		have.md, err = u.store.Metadata(gctx, id)
		return err
	})
	g.Go(func() (err error) {
		have.manifest, have.hasManifest, err = u.store.Manifest(gctx, id)
		return err
	})
	if err := g.Wait(); err != nil {
		return current{}, fmt.Errorf("reading records: %w", markCorrupt(err))
	}
	return have, nil
}

// markCorrupt makes a corrupt document terminal: retrying cannot mend it.
func markCorrupt(err error) error {
	if errors.Is(err, vault.ErrCorrupt) || errors.Is(err, vault.ErrInvalid) {
		return retry.Terminal(err)
	}
	return err
}

// storedInstances answers, for an instance the index does not hold, whether
// Vault may hold its metadata or manifest. The first question of a run lists
// the store once; a cold run then reads nothing for instances Vault never
// saw, and a warm run (every instance indexed) never asks.
type storedInstances struct {
	list func(context.Context) (map[string]bool, error)
	log  *slog.Logger
	once sync.Once
	ids  map[string]bool // nil: unknown, read every instance
}

// mayHold is false only when the listing worked and does not name id.
func (s *storedInstances) mayHold(ctx context.Context, id string) bool {
	s.once.Do(func() {
		ids, err := s.list(ctx)
		if err != nil {
			s.log.Warn("listing instances failed; reading each instance's records", "error", err)
			return
		}
		s.ids = ids
	})
	return s.ids == nil || s.ids[id]
}
