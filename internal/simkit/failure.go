package simkit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Failure makes some requests of a simulator fail, answer slowly or end
// short. Each simulator says which fields it honours and what it answers.
type Failure struct {
	// Endpoint is the route template it applies to, e.g. "/deployments/:name",
	// or a method and a template, "GET /v3/service_instances"; "" = every
	// route but the admin API.
	Endpoint string `json:"endpoint"`
	// Method is the HTTP method it applies to; "" = any.
	Method string `json:"method,omitempty"`
	// Deployment limits it to the requests for one deployment (the :name of
	// a Director's route); "" = any request.
	Deployment string `json:"deployment,omitempty"`
	// Rate is the share (0..1) of matching requests affected; 0 = every one.
	Rate float64 `json:"rate"`
	// Status is answered to affected requests. Default 500; when Delay is
	// set and Status is 0, or CutShort is set, the request is otherwise
	// answered normally.
	Status int `json:"status"`
	// CutShort answers normally but sends only the first half of the body
	// under the full Content-Length, then closes the connection.
	CutShort bool `json:"cut_short,omitempty"`
	// Delay is waited before an affected request is answered. Default 0.
	Delay time.Duration `json:"-"`
	// Count limits the failure to the next Count affected requests, after
	// which it is removed; 0 = unlimited.
	Count int `json:"count"`
}

// ErrBadFailure is matched by the errors of a failure a simulator cannot
// apply as asked.
var ErrBadFailure = errors.New("bad failure")

// Matches reports whether f applies to a request of method to the route
// template tmpl, for deployment name (the route's :name, "" when none).
func (f *Failure) Matches(method, tmpl, name string) bool {
	if f.Deployment != "" && f.Deployment != name {
		return false
	}
	endpoint, fMethod := f.Endpoint, f.Method
	if m, path, ok := strings.Cut(endpoint, " "); ok {
		fMethod, endpoint = m, path
	}
	return (endpoint == "" || endpoint == tmpl) && (fMethod == "" || strings.EqualFold(fMethod, method))
}

// Validate refuses a failure no simulator can apply.
func (f *Failure) Validate() error {
	switch {
	case f.Rate < 0 || f.Rate > 1 || f.Rate != f.Rate:
		return fmt.Errorf("%w: failure %+v: rate %v is not between 0 and 1", ErrBadFailure, *f, f.Rate)
	case f.Status != 0 && (f.Status < 200 || f.Status > 599):
		return fmt.Errorf("%w: failure %+v: status %d is not between 200 and 599", ErrBadFailure, *f, f.Status)
	case f.Delay < 0:
		return fmt.Errorf("%w: failure %+v: delay %v is negative", ErrBadFailure, *f, f.Delay)
	case f.Count < 0:
		return fmt.Errorf("%w: failure %+v: count %d is negative", ErrBadFailure, *f, f.Count)
	}
	return nil
}

// ParseFailure reads a failure written as comma-separated key=value pairs
// (keys: endpoint, method, deployment, rate, status, cut_short, delay,
// count), e.g. "endpoint=/deployments/:name,method=GET,rate=0.1,status=503,delay=2s,count=5":
// the syntax of the simulators' -failure flag.
func ParseFailure(spec string) (Failure, error) {
	var f Failure
	if err := ParseKeyValues("failure", spec, f.set); err != nil {
		return Failure{}, fmt.Errorf("%w: %w", ErrBadFailure, err)
	}
	return f, f.Validate()
}

func (f *Failure) set(key, value string) error {
	var err error
	switch key {
	case "endpoint":
		f.Endpoint = value
	case "method":
		f.Method = value
	case "deployment":
		f.Deployment = value
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
		err = errors.New("unknown key")
	}
	return err
}

// ParseKeyValues calls set for each key=value of a comma-separated spec of a
// kind ("failure", "seed plan").
func ParseKeyValues(kind, spec string, set func(key, value string) error) error {
	for _, kv := range strings.Split(spec, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return fmt.Errorf("%s %q: %q is not key=value", kind, spec, kv)
		}
		if err := set(key, value); err != nil {
			return fmt.Errorf("%s %q: %s: %v", kind, spec, key, err)
		}
	}
	return nil
}

// AdminFailure is a failure as the simulators' admin API (/_sim/config)
// reads and writes it: its delay in milliseconds.
type AdminFailure struct {
	Failure
	DelayMS int64 `json:"delay_ms"`
}

// AdminFailures are failures as the admin API writes them.
func AdminFailures(fs []Failure) []AdminFailure {
	out := make([]AdminFailure, 0, len(fs))
	for _, f := range fs {
		out = append(out, AdminFailure{Failure: f, DelayMS: f.Delay.Milliseconds()})
	}
	return out
}

// FromAdmin are the failures an admin body asked for, each checked by
// check (the simulator's own refusals); the first refused is the error and
// none is returned, so that a refused body changes nothing.
func FromAdmin(list []AdminFailure, check func(*Failure) error) ([]Failure, error) {
	out := make([]Failure, 0, len(list))
	for _, af := range list {
		f := af.Failure
		f.Delay = time.Duration(af.DelayMS) * time.Millisecond
		if err := check(&f); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
