package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Failure makes some requests fail, answer slowly or end short.
type Failure struct {
	// Endpoint is the route template it applies to, e.g.
	// "/v3/service_instances" or "GET /v3/service_instances/:guid"; "" =
	// every route but /_sim.
	Endpoint string `json:"endpoint"`
	// Rate is the share (0..1) of matching requests affected; 0 = every one.
	Rate float64 `json:"rate"`
	// Status is answered to affected requests. Default 500 (UnknownError);
	// 503 carries CF-ServiceUnavailable, other statuses an empty body. When
	// Delay is set and Status is 0, or CutShort is set, the request is
	// otherwise answered normally.
	Status int `json:"status"`
	// CutShort answers normally but sends only the first half of the body
	// under the full Content-Length, then closes the connection: a page cut
	// short. Default false.
	CutShort bool `json:"cut_short"`
	// Delay is waited before an affected request is answered. Default 0.
	Delay time.Duration `json:"-"`
	// Count limits the failure to the next Count affected requests, after
	// which it is removed; 0 = unlimited.
	Count int `json:"count"`
}

// matches reports whether f applies to a request of method to tmpl.
func (f *Failure) matches(method, tmpl string) bool {
	endpoint, fMethod := f.Endpoint, ""
	if m, path, ok := strings.Cut(endpoint, " "); ok {
		fMethod, endpoint = m, path
	}
	return (endpoint == "" || endpoint == tmpl) && (fMethod == "" || strings.EqualFold(fMethod, method))
}

// validate refuses a failure the simulator cannot apply as asked.
func (f *Failure) validate() error {
	switch {
	case f.Rate < 0 || f.Rate > 1 || f.Rate != f.Rate:
		return fmt.Errorf("%w: failure %+v: rate is not between 0 and 1", ErrBadOptions, *f)
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
// e.g. "endpoint=/v3/service_instances,rate=0.1,status=503,delay=2s,count=5,cut_short=true";
// it is the syntax of the binary's -failure flag.
func ParseFailure(spec string) (Failure, error) {
	var f Failure
	for _, kv := range strings.Split(spec, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return Failure{}, fmt.Errorf("%w: failure %q: %q is not key=value", ErrBadOptions, spec, kv)
		}
		if err := f.set(key, value); err != nil {
			return Failure{}, fmt.Errorf("%w: failure %q: %s: %v", ErrBadOptions, spec, key, err)
		}
	}
	return f, f.validate()
}

func (f *Failure) set(key, value string) error {
	var err error
	switch key {
	case "endpoint":
		f.Endpoint = value
	case "rate":
		f.Rate, err = strconv.ParseFloat(value, 64)
	case "status":
		f.Status, err = strconv.Atoi(value)
	case "cut_short":
		f.CutShort, err = strconv.ParseBool(value)
	case "delay":
		f.Delay, err = time.ParseDuration(value)
	case "count":
		f.Count, err = strconv.Atoi(value)
	default:
		err = fmt.Errorf("unknown key")
	}
	return err
}
