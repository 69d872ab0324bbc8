package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/internal/metrics"
)

func counter(labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "x"}, labels)
}

func TestRegisterReusesTheRegisteredCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	first := metrics.MustRegister(reg, counter("a"))
	second := metrics.MustRegister(reg, counter("a"))
	if first != second {
		t.Fatal("a second registration under the same description did not return the first collector")
	}
	first.WithLabelValues("v").Inc()
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || len(families[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, %v", families, err)
	}
}

func TestRegisterReportsAConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.MustRegister(reg, counter("a"))
	if _, err := metrics.Register(reg, counter("b")); err == nil {
		t.Fatal("registering the same name with other labels did not fail")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("MustRegister did not panic on a conflict")
		}
	}()
	metrics.MustRegister(reg, counter("b"))
}

func TestRegisterWithoutARegistry(t *testing.T) {
	c := counter("a")
	got, err := metrics.Register(nil, c)
	if err != nil || got != c {
		t.Fatalf("got %v, %v", got, err)
	}
}
