package sim

import (
	"maps"
	"sync"
	"time"
)

// Stats counts what the Director was asked since it started or since the
// last ResetStats.
type Stats struct {
	// Requests per endpoint, keyed "METHOD /route/:template", e.g.
	// "GET /deployments/:name"; unknown routes count as "METHOD (unknown)".
	// The /_sim admin API is not counted.
	Requests map[string]int `json:"requests"`
	// Tasks is the number of tasks created.
	Tasks int `json:"tasks"`
	// TaskStates counts those tasks by their current state.
	TaskStates map[string]int `json:"task_states"`
	// Tokens is the number of UAA tokens issued.
	Tokens int `json:"tokens"`
	// Active is the number of requests being served right now (not reset).
	Active int `json:"active"`
	// Deployments is the number of deployments held right now (not reset).
	Deployments int `json:"deployments"`
}

// counters are the request counts behind Stats.
type counters struct {
	mu       sync.Mutex
	requests map[string]int
	active   int
	tokens   int
}

func (c *counters) begin(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.requests == nil {
		c.requests = map[string]int{}
	}
	c.requests[key]++
	c.active++
}

func (c *counters) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active--
}

func (c *counters) tokenIssued() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tokens++
}

// meter reads and resets what Stats and TaskLog report: the request
// counters and the tasks since the last reset.
type meter struct {
	db     *store
	counts *counters
}

// stats is a snapshot of the counters (Director.Stats).
func (m *meter) stats() Stats {
	m.counts.mu.Lock()
	s := Stats{Requests: maps.Clone(m.counts.requests), Tokens: m.counts.tokens, Active: m.counts.active}
	m.counts.mu.Unlock()
	if s.Requests == nil {
		s.Requests = map[string]int{}
	}
	m.db.mu.RLock()
	defer m.db.mu.RUnlock()
	s.TaskStates = map[string]int{}
	for _, t := range m.db.tasks[m.db.taskBase:] {
		if t == nil { // removed by a tasks cleanup
			continue
		}
		s.Tasks++
		s.TaskStates[t.state]++
	}
	s.Deployments = len(m.db.deployments)
	return s
}

// reset zeroes the request, task and token counters (Director.ResetStats).
func (m *meter) reset() {
	m.counts.mu.Lock()
	m.counts.requests, m.counts.tokens = nil, 0
	m.counts.mu.Unlock()
	m.db.mu.Lock()
	m.db.taskBase = len(m.db.tasks)
	m.db.mu.Unlock()
}

// TaskEntry is one task of TaskLog.
type TaskEntry struct {
	ID          int    `json:"id"`
	Description string `json:"description"`
	Deployment  string `json:"deployment"`
	ContextID   string `json:"context_id"`
	State       string `json:"state"`
	// Created is when it was created (queued); Began and Ended when it
	// started processing and when it ended (zero while it has not).
	Created time.Time `json:"created,omitzero"`
	Began   time.Time `json:"began,omitzero"`
	Ended   time.Time `json:"ended,omitzero"`
}

// taskLog lists the tasks since the start or the last reset (Director.TaskLog).
func (m *meter) taskLog() []TaskEntry {
	m.db.mu.RLock()
	defer m.db.mu.RUnlock()
	out := []TaskEntry{}
	for _, t := range m.db.tasks[m.db.taskBase:] {
		if t == nil {
			continue
		}
		out = append(out, TaskEntry{ID: t.id, Description: t.description, Deployment: t.deployment, ContextID: t.ctxID,
			State: t.state, Created: t.created, Began: t.began, Ended: t.ended})
	}
	return out
}

// MaxOverlap is the most entries of log that were processing at once.
func MaxOverlap(log []TaskEntry) int {
	most := 0
	for _, a := range log {
		if a.Began.IsZero() {
			continue
		}
		n := 0
		for _, b := range log {
			if !b.Began.IsZero() && !b.Began.After(a.Began) && (b.Ended.IsZero() || b.Ended.After(a.Began)) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}
