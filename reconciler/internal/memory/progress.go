package memory

import (
	"sync/atomic"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// Progress is the phase and progress of a run, as Status shows them while
// it runs. It is safe for concurrent use; the zero Progress is in
// PhaseScanning.
type Progress struct {
	phase       atomic.Value // string
	done, total atomic.Int64
}

// SetPhase moves the run to phase.
func (p *Progress) SetPhase(phase string) { p.phase.Store(phase) }

// Phase is the run's phase.
func (p *Progress) Phase() string {
	if s, ok := p.phase.Load().(string); ok {
		return s
	}
	return report.PhaseScanning
}

// SetTotal says how many deployments the run deals with.
func (p *Progress) SetTotal(n int) { p.total.Store(int64(n)) }

// Done counts one more deployment dealt with.
func (p *Progress) Done() { p.done.Add(1) }

// Now is the progress so far.
func (p *Progress) Now() report.Progress {
	return report.Progress{Done: int(p.done.Load()), Total: int(p.total.Load())}
}
