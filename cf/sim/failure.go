package sim

import (
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// Failure makes some requests fail, answer slowly or end short
// (simkit.Failure): the Cloud Controller simulator honours Endpoint (a
// route template, "GET /v3/service_instances" with a method), Method, Rate,
// Status (500 an UnknownError, 503 CF-ServiceUnavailable, other statuses an
// empty body), CutShort, Delay and Count; it has no deployments.
type Failure = simkit.Failure

// checkFailure refuses a failure the simulator cannot apply as asked.
func checkFailure(f *Failure) error {
	if f.Deployment != "" {
		return fmt.Errorf("%w: failure %+v: the Cloud Controller simulator has no deployments", ErrBadOptions, *f)
	}
	if err := f.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	return nil
}

// ParseFailure reads a failure written as comma-separated key=value pairs,
// e.g. "endpoint=/v3/service_instances,rate=0.1,status=503,delay=2s,count=5,cut_short=true";
// it is the syntax of the binary's -failure flag.
func ParseFailure(spec string) (Failure, error) {
	f, err := simkit.ParseFailure(spec)
	if err != nil {
		return Failure{}, fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	return f, checkFailure(&f)
}
