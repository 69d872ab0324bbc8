package reconciler

import "context"

// Part is one of the reconciler's loops: Serve runs it until ctx ends, then
// returns nil; an error only when it could not start (ErrAlreadyStarted).
// The daemon serves each part in its errgroup, beside the HTTP server;
// none holds the Manager, each is given what it uses.
type Part interface {
	Serve(ctx context.Context) error
}

// Loops are the reconciler's parts.
type Loops struct {
	// Lease keeps this daemon's claim to lead (HA): it takes the lease when
	// free, renews it, and releases it when stopped. Nil without HA.
	Lease Part
	// Runs makes the runs: at once, every interval, and when asked.
	Runs Part
	// Watch looks at the Directors' feeds between runs and asks for a run
	// when they changed (reconciler.watch_interval; zero: no watch).
	Watch Part
	// Upgrades makes the fleet upgrades handed to it (POST /b/upgrades,
	// the background mode), one at a time.
	Upgrades *Upgrades
	// Health asks the Directors for their VMs' states beside the runs.
	Health HealthLoop

	enabled bool // reconciler.enabled
}

// Loops returns the reconciler's parts.
func (m *Manager) Loops() Loops {
	l := Loops{Runs: m.runs, Watch: m.watcher, Upgrades: m.upgrades, Health: m.health, enabled: m.cfg.Enabled}
	if m.elector != nil {
		l.Lease = m.elector
	}
	return l
}

// All are the parts the daemon serves, in order: with reconciler.enabled
// false only the runs' loop, which waits and runs nothing; otherwise the
// lease (with HA), the runs, the watch, the fleet upgrades and the health
// loop.
func (l Loops) All() []Part {
	if !l.enabled {
		return []Part{l.Runs}
	}
	var all []Part
	if l.Lease != nil {
		all = append(all, l.Lease)
	}
	return append(all, l.Runs, l.Watch, l.Upgrades, l.Health)
}
