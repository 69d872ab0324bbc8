package reconciler

import (
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/run"
)

// Views are what an operator reads of the instances, outside the runs: one
// instance (Instance), a page of them (List), and the platform's
// cross-check made once (Platform). They write nothing and tell nobody;
// they are safe for concurrent use. Manager.Views hands them out.
type Views struct {
	cfg    config.ReconcilerConfig
	parts  *run.Parts
	stores *stores
	status *published
	now    func() time.Time
}

// Views are the Manager's read-only views of the instances.
func (m *Manager) Views() *Views {
	return &Views{cfg: m.cfg, parts: &m.parts, stores: &m.stores, status: m.status, now: m.now}
}
