package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/internal/vaultcluster"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// setUp builds the daemon and the simulators and starts everything: the
// Vault cluster, two Director simulators with o.deployments seeded
// deployments between them, the Cloud Controller simulator holding every
// seeded instance but the orphans (the first of the first Director's), and
// three daemons on the sample catalog.
func (s *soak) setUp(ctx context.Context, o settings, root, dir string) error {
	bins := map[string]string{}
	for _, pkg := range []string{"./cmd/blacksmith", "./cmd/bosh-director-sim", "./cmd/cc-sim"} {
		bin, err := build(ctx, root, pkg, dir)
		if err != nil {
			return err
		}
		bins[pkg] = bin
	}
	var err error
	if s.cluster, err = vaultcluster.Start(ctx, vaultcluster.Options{}); err != nil {
		return fmt.Errorf("starting the Vault cluster: %w", err)
	}
	s.world = daemonWorld{vault: s.cluster.Addr(), token: s.cluster.Token, catalog: filepath.Join(root, "manifests", "catalog")}
	for i, name := range []string{"east", "west"} {
		n := o.deployments / 2
		if i == 0 {
			n = o.deployments - n
		}
		sim, err := startSim(bins["./cmd/bosh-director-sim"], dir, name, n)
		if sim != nil {
			s.world.directors = append(s.world.directors, sim)
		}
		if err != nil {
			return err
		}
	}
	if s.cc, err = startCC(bins["./cmd/cc-sim"], dir); err != nil {
		return err
	}
	s.world.cc = s.cc.url
	s.orphans = s.world.directors[0].seeded[:orphans]
	if err := s.holdSeeded(ctx); err != nil {
		return err
	}
	for i := range 3 {
		d, err := startDaemon(bins["./cmd/blacksmith"], dir, i+1, s.world)
		if d != nil {
			s.daemons = append(s.daemons, d)
		}
		if err != nil {
			return err
		}
	}
	s.store, err = vault.New(ctx, vault.Options{Address: s.cluster.Addr(), Token: s.cluster.Token})
	return err
}

// holdSeeded makes the platform hold every seeded instance but the
// orphans, four requests at once.
func (s *soak) holdSeeded(ctx context.Context) error {
	orphan := map[string]bool{}
	for _, n := range s.orphans {
		orphan[n] = true
	}
	names := make(chan string)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range names {
				if err := s.cc.add(ctx, n); err != nil {
					select { // the first is kept; the rest drained
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	go func() {
		defer close(names)
		for _, sim := range s.world.directors {
			for _, n := range sim.seeded {
				if orphan[n] {
					continue
				}
				select {
				case names <- n:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	wg.Wait()
	select {
	case err := <-errs:
		return fmt.Errorf("the platform's instances: %w", err)
	default:
		return ctx.Err()
	}
}
