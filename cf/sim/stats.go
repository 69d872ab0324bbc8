package sim

import (
	"maps"
	"sync"
)

// Stats counts what the simulator was asked since it started or since the
// last ResetStats.
type Stats struct {
	// Requests per route, keyed "METHOD /route/:template", e.g.
	// "GET /v3/service_instances/:guid"; unknown routes count as
	// "METHOD (unknown)". The /_sim admin API is not counted.
	Requests map[string]int `json:"requests"`
	// Tokens is the number of access tokens issued.
	Tokens int `json:"tokens"`
	// Active is the number of requests being served right now (not reset).
	Active int `json:"active"`
	// Instances is the number of service instances held (not reset).
	Instances int `json:"instances"`
}

// counters are the request counts behind Stats.
type counters struct {
	mu       sync.Mutex
	requests map[string]int
	active   int
}

func (k *counters) begin(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.requests == nil {
		k.requests = map[string]int{}
	}
	k.requests[key]++
	k.active++
}

func (k *counters) end() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.active--
}

// Stats returns a snapshot of the counters.
func (c *CC) Stats() Stats {
	c.counts.mu.Lock()
	s := Stats{Requests: maps.Clone(c.counts.requests), Active: c.counts.active}
	c.counts.mu.Unlock()
	if s.Requests == nil {
		s.Requests = map[string]int{}
	}
	c.tokens.mu.Lock()
	s.Tokens = c.tokens.issued
	c.tokens.mu.Unlock()
	s.Instances = c.foundation.InstanceCount()
	return s
}

// ResetStats zeroes the request and token counters.
func (c *CC) ResetStats() {
	c.counts.mu.Lock()
	c.counts.requests = nil
	c.counts.mu.Unlock()
	c.tokens.mu.Lock()
	c.tokens.issued = 0
	c.tokens.mu.Unlock()
}
