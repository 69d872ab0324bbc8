package sim

import (
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// Failure makes some requests fail or answer slowly (simkit.Failure): the
// Director simulator honours Endpoint, Method, Deployment, Rate, Status
// (answered with an empty body), Delay and Count; it does not cut an
// answer short.
type Failure = simkit.Failure

// checkFailure refuses a failure the simulator cannot apply as asked.
func checkFailure(f *Failure) error {
	if f.CutShort {
		return fmt.Errorf("%w: failure %+v: the Director simulator does not cut answers short", ErrBadOptions, *f)
	}
	if err := f.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	return nil
}

// ParseFailure reads a failure written as comma-separated key=value pairs,
// e.g. "endpoint=/deployments/:name,method=GET,rate=0.1,status=503,delay=2s,count=5"
// (keys: endpoint, method, deployment, rate, status, delay, count). It is the
// syntax of the binary's -failure flag.
func ParseFailure(spec string) (Failure, error) {
	f, err := simkit.ParseFailure(spec)
	if err != nil {
		return Failure{}, fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	return f, checkFailure(&f)
}

// parseKeyValues calls set for each key=value of a comma-separated spec of a
// kind ("failure", "seed plan").
func parseKeyValues(kind, spec string, set func(key, value string) error) error {
	if err := simkit.ParseKeyValues(kind, spec, set); err != nil {
		return fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	return nil
}
