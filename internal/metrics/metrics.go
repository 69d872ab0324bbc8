// Package metrics is the one way the project's packages register their
// Prometheus collectors: on the registry they are given (none: not
// registered), reusing a collector already registered under the same
// description, so that two clients of one kind can share a registry.
package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c on reg and returns it, or the collector reg already
// holds under the same description (of the same type). A nil reg registers
// nothing. Any other registration error is returned with c.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if reg == nil {
		return c, nil
	}
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// MustRegister is Register for collectors whose registration can only fail
// through a programming error (a name registered twice with other labels):
// it panics then, as prometheus.MustRegister does.
func MustRegister[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	c, err := Register(reg, c)
	if err != nil {
		panic(err)
	}
	return c
}
