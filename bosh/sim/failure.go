package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Failure makes some requests fail or answer slowly.
type Failure struct {
	// Endpoint is the route template the failure applies to, e.g.
	// "/deployments/:name" or "GET /deployments"; "" = every endpoint.
	Endpoint string `json:"endpoint"`
	// Method is the HTTP method it applies to; "" = any.
	Method string `json:"method"`
	// Deployment limits it to the requests for one deployment (the :name
	// of the route); "" = any request.
	Deployment string `json:"deployment,omitempty"`
	// Rate is the share (0..1) of matching requests affected; 0 = every one.
	Rate float64 `json:"rate"`
	// Status is answered, with an empty body, to affected requests. Default
	// 500; when Delay is set and Status is 0 the request is only slowed.
	Status int `json:"status"`
	// Delay is waited before an affected request is answered. Default 0.
	Delay time.Duration `json:"-"`
	// Count limits the failure to the next Count affected requests, after
	// which it is removed; 0 = unlimited.
	Count int `json:"count"`
}

// matches reports whether f applies to a request of method to tmpl, for
// deployment name (the route's :name, "" when it has none).
func (f *Failure) matches(method, tmpl, name string) bool {
	if f.Deployment != "" && f.Deployment != name {
		return false
	}
	endpoint, fMethod := f.Endpoint, f.Method
	if m, path, ok := strings.Cut(endpoint, " "); ok {
		fMethod, endpoint = m, path
	}
	return (endpoint == "" || endpoint == tmpl) && (fMethod == "" || strings.EqualFold(fMethod, method))
}

// validate refuses a failure the simulator cannot apply as asked.
func (f *Failure) validate() error {
	switch {
	case f.Rate < 0 || f.Rate > 1:
		return fmt.Errorf("%w: failure %+v: rate %v is not between 0 and 1", ErrBadOptions, *f, f.Rate)
	case f.Status != 0 && (f.Status < 200 || f.Status > 599):
		return fmt.Errorf("%w: failure %+v: status %d is not between 200 and 599", ErrBadOptions, *f, f.Status)
	case f.Delay < 0:
		return fmt.Errorf("%w: failure %+v: delay %v is negative", ErrBadOptions, *f, f.Delay)
	case f.Count < 0:
		return fmt.Errorf("%w: failure %+v: count %d is negative", ErrBadOptions, *f, f.Count)
	}
	return nil
}

// ParseFailure reads a failure written as comma-separated key=value pairs,
// e.g. "endpoint=/deployments/:name,method=GET,rate=0.1,status=503,delay=2s,count=5"
// (keys: endpoint, method, rate, status, delay, count). It is the syntax of
// the binary's -failure flag.
func ParseFailure(spec string) (Failure, error) {
	var f Failure
	if err := parseKeyValues("failure", spec, f.set); err != nil {
		return Failure{}, err
	}
	if err := f.validate(); err != nil {
		return Failure{}, err
	}
	return f, nil
}

// parseKeyValues calls set for each key=value of a comma-separated spec of a
// kind ("failure", "seed plan").
func parseKeyValues(kind, spec string, set func(key, value string) error) error {
	for _, kv := range strings.Split(spec, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return fmt.Errorf("%w: %s %q: %q is not key=value", ErrBadOptions, kind, spec, kv)
		}
		if err := set(key, value); err != nil {
			return fmt.Errorf("%w: %s %q: %s: %v", ErrBadOptions, kind, spec, key, err)
		}
	}
	return nil
}

func (f *Failure) set(key, value string) error {
	var err error
	switch key {
	case "endpoint":
		f.Endpoint = value
	case "method":
		f.Method = value
	case "rate":
		f.Rate, err = strconv.ParseFloat(value, 64)
	case "status":
		f.Status, err = strconv.Atoi(value)
	case "delay":
		f.Delay, err = time.ParseDuration(value)
	case "count":
		f.Count, err = strconv.Atoi(value)
	default:
		err = fmt.Errorf("unknown key")
	}
	return err
}
