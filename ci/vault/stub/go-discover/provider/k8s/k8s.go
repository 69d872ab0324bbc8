// Package k8s stands in for go-discover's Kubernetes provider in this
// development build of Vault (see the discover package).
package k8s

import (
	"fmt"
	"log"

	discover "github.com/hashicorp/go-discover"
)

// Provider answers that Kubernetes discovery is not built in.
type Provider struct{}

// Help says what the provider can do: nothing here.
func (p *Provider) Help() string {
	return "Kubernetes auto-join is not part of this development build of Vault"
}

// Addrs answers discover.ErrNotBuilt.
func (p *Provider) Addrs(map[string]string, *log.Logger) ([]string, error) {
	return nil, fmt.Errorf("provider k8s: %w", discover.ErrNotBuilt)
}
