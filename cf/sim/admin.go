package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// adminConfig is the body of GET and POST /_sim/config; on POST, absent
// fields are left as they are and "failures" replaces every failure.
type adminConfig struct {
	LatencyMS         *int64          `json:"latency_ms,omitempty"`
	TokenTTLS         *int64          `json:"token_ttl_s,omitempty"`
	RateLimit         *int            `json:"rate_limit,omitempty"`
	RateLimitWindowMS *int64          `json:"rate_limit_window_ms,omitempty"`
	Failures          *[]adminFailure `json:"failures,omitempty"`
}

// adminFailure is a Failure in JSON, its delay in milliseconds.
type adminFailure = simkit.AdminFailure

// adminRoutes serves the /_sim admin API: no authentication, no latency,
// no failures, not counted.
func (c *CC) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /_sim/stats", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, c.Stats()) })
	mux.HandleFunc("GET /_sim/config", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, c.adminConfig()) })
	mux.HandleFunc("POST /_sim/config", c.adminSetConfig)
	mux.HandleFunc("POST /_sim/reset", func(w http.ResponseWriter, _ *http.Request) {
		c.ResetStats()
		c.knobs.ClearFailures()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /_sim/revoke-tokens", func(w http.ResponseWriter, _ *http.Request) {
		c.RevokeTokens()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /_sim/service_instances", c.adminAddInstance)
	mux.HandleFunc("DELETE /_sim/service_instances/{guid}", func(w http.ResponseWriter, r *http.Request) {
		if !c.foundation.RemoveInstance(r.PathValue("guid")) {
			adminError(w, http.StatusNotFound, ErrNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func adminError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

func (c *CC) adminConfig() adminConfig {
	lat, ttl := c.knobs.latency().Milliseconds(), int64(c.knobs.tokenTTL().Seconds())
	limit, window := c.knobs.rateLimit()
	windowMS := window.Milliseconds()
	fs := simkit.AdminFailures(c.knobs.Failures())
	return adminConfig{LatencyMS: &lat, TokenTTLS: &ttl, RateLimit: &limit, RateLimitWindowMS: &windowMS, Failures: &fs}
}

func (c *CC) adminSetConfig(w http.ResponseWriter, r *http.Request) {
	var cfg adminConfig
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	failures, err := cfg.check()
	if err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	if cfg.LatencyMS != nil {
		c.knobs.SetLatency(time.Duration(*cfg.LatencyMS) * time.Millisecond)
	}
	if cfg.TokenTTLS != nil {
		c.knobs.SetTokenTTL(time.Duration(*cfg.TokenTTLS) * time.Second)
	}
	if cfg.RateLimit != nil || cfg.RateLimitWindowMS != nil {
		cur := c.adminConfig()
		limit, window := *cur.RateLimit, time.Duration(*cur.RateLimitWindowMS)*time.Millisecond
		if cfg.RateLimit != nil {
			limit = *cfg.RateLimit
		}
		if cfg.RateLimitWindowMS != nil {
			window = time.Duration(*cfg.RateLimitWindowMS) * time.Millisecond
		}
		c.knobs.SetRateLimit(limit, window)
	}
	if cfg.Failures != nil {
		c.knobs.faults.Set(failures)
	}
	writeJSON(w, http.StatusOK, c.adminConfig())
}

// check refuses values the setters would ignore, so that a refused body
// changes nothing; it returns the failures.
func (cfg adminConfig) check() ([]Failure, error) {
	switch {
	case cfg.LatencyMS != nil && *cfg.LatencyMS < 0:
		return nil, fmt.Errorf("latency_ms %d is negative", *cfg.LatencyMS)
	case cfg.TokenTTLS != nil && *cfg.TokenTTLS < 1:
		return nil, fmt.Errorf("token_ttl_s %d is less than 1", *cfg.TokenTTLS)
	case cfg.RateLimit != nil && *cfg.RateLimit < 0:
		return nil, fmt.Errorf("rate_limit %d is negative", *cfg.RateLimit)
	case cfg.RateLimitWindowMS != nil && *cfg.RateLimitWindowMS < 1:
		return nil, fmt.Errorf("rate_limit_window_ms %d is less than 1", *cfg.RateLimitWindowMS)
	case cfg.Failures == nil:
		return nil, nil
	}
	return simkit.FromAdmin(*cfg.Failures, checkFailure)
}
