package reconciler

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/healthloop"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// HealthLoop asks the Directors how the instances' VMs are, beside the
// runs and within a budget per Director (see Manager.Health).
type HealthLoop interface {
	// Serve works until ctx ends, while the daemon leads, from what each
	// run hands it.
	Serve(ctx context.Context) error
	// Status is what the loop is doing.
	Status() report.HealthLoopStatus
}

// Health is the health loop (Loops.Health): the daemon serves it beside
// the runs (it works while the daemon leads, from what each run hands it).
func (m *Manager) Health() HealthLoop { return m.health }

// healthMetrics are the health loop's collectors.
type healthMetrics struct {
	tasks     *prometheus.GaugeVec
	checks    *prometheus.CounterVec
	heldOff   *prometheus.CounterVec
	unhealthy prometheus.Gauge
}

func newHealthMetrics(r prometheus.Registerer, unhealthy prometheus.Gauge) (*healthMetrics, error) {
	reg := &registrar{reg: r}
	hm := &healthMetrics{
		tasks: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blacksmith_health_vm_state_tasks",
			Help: "vm-state tasks the health loop has running on each Director (at most reconciler.health.tasks_at_once).",
		}, []string{"director"})),
		checks: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_health_checks_total",
			Help: "Deployments whose VM states the health loop asked a Director for, by result (answered, failed).",
		}, []string{"director", "result"})),
		heldOff: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_health_held_off_total",
			Help: "Times the health loop started no vm-state task because the Director had a task of the broker's queued.",
		}, []string{"director"})),
		unhealthy: unhealthy,
	}
	if reg.err != nil {
		return nil, reg.err
	}
	return hm, nil
}

func (hm *healthMetrics) InFlight(director string, n int) {
	hm.tasks.WithLabelValues(director).Set(float64(n))
}

func (hm *healthMetrics) Checked(director string, ok bool) {
	result := "answered"
	if !ok {
		result = "failed"
	}
	hm.checks.WithLabelValues(director, result).Inc()
}

func (hm *healthMetrics) HeldOff(director string) { hm.heldOff.WithLabelValues(director).Inc() }

func (hm *healthMetrics) Unhealthy(n int) { hm.unhealthy.Set(float64(n)) }

// fencedState is a state store whose writes are refused once this daemon
// lost the leader lease (fence nil: no HA), as a run's are.
type fencedState struct {
	memory.StateStore
	fence func() error
}

func (f fencedState) WriteState(ctx context.Context, name string, v any) error {
	if f.fence != nil {
		if err := f.fence(); err != nil {
			return err
		}
	}
	return f.StateStore.WriteState(ctx, name, v)
}

// healthDirectors are the configured Directors as the health loop asks them.
func healthDirectors(d *fleet.Directors) []healthloop.Director {
	var out []healthloop.Director
	for _, n := range d.Each() {
		out = append(out, healthloop.Director{Name: n.Name, Health: n.Health, Tasks: n.Tasks})
	}
	return out
}
