package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	vaultapi "github.com/hashicorp/vault/api"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/operator"
)

// health backs /healthz: whether the start-up connection to Vault
// succeeded, and whether Vault and the Director answer now.
type health struct {
	vault       connState
	vaultClient *vaultapi.Client
	p           *parts
}

// connState is the outcome of the last start-up connection attempt.
type connState struct {
	mu        sync.Mutex
	connected bool
	err       error
}

func (c *connState) set(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.connected = c.connected || err == nil
	c.err = err
}

// check is nil once connected; before, it is the last attempt's error.
func (c *connState) check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.connected:
		return nil
	case c.err != nil:
		return fmt.Errorf("not connected yet: %w", c.err)
	}
	return errors.New("not connected yet")
}

func newHealth(cfg *config.Config, p *parts) (*health, error) {
	vc := vaultapi.DefaultConfig()
	vc.Address = cfg.Vault.Address
	vc.Timeout = healthTimeout
	if err := vc.ConfigureTLS(&vaultapi.TLSConfig{CACert: cfg.Vault.CACert, Insecure: cfg.Vault.SkipSSLValidation}); err != nil {
		return nil, fmt.Errorf("configuring TLS for vault: %w", err)
	}
	client, err := vaultapi.NewClient(vc)
	if err != nil {
		return nil, fmt.Errorf("creating the vault health client: %w", err)
	}
	return &health{vaultClient: client, p: p}, nil
}

// checks are the /healthz checks.
func (h *health) checks() map[string]operator.HealthCheck {
	checks := map[string]operator.HealthCheck{
		"vault": func(ctx context.Context) error {
			if err := h.vault.check(); err != nil {
				return err
			}
			st, err := h.vaultClient.Sys().HealthWithContext(ctx)
			switch {
			case err != nil:
				return err
			case st.Sealed:
				return errors.New("vault is sealed")
			}
			return nil
		},
	}
	for i, c := range h.p.directors {
		name := "director" // the first keeps the name it had with one Director
		if i > 0 {
			name = "director-" + c.Name()
		}
		checks[name] = func(ctx context.Context) error {
			_, err := c.Info(ctx)
			return err
		}
	}
	return checks
}
