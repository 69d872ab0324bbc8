package reconciler

// request is a run asked for with Trigger, shared by every caller whose
// request was merged into it.
type request struct {
	id      string
	opts    RunOptions
	waiters []chan Summary
}

// setStarted marks Start as running or not; on the way out, callers still
// waiting for a run have their channel closed without a summary.
func (m *Manager) setStarted(on bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if on && m.started {
		return ErrAlreadyStarted
	}
	m.started = on
	if !on {
		for i, p := range m.pending {
			for _, w := range p.waitersOrNil() {
				close(w)
			}
			m.pending[i] = nil
		}
	}
	return nil
}

func (r *request) waitersOrNil() []chan Summary {
	if r == nil {
		return nil
	}
	return r.waiters
}

// scheduled is the interval's run; a pending triggered run is merged into it.
func (m *Manager) scheduled() *request {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.pending[0]; p != nil {
		m.pending[0] = nil
		return p
	}
	return &request{id: newRunID(), opts: RunOptions{Reason: "interval"}}
}

// takePending takes the pending run (before the pending dry run).
func (m *Manager) takePending() *request {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, p := range m.pending {
		if p != nil {
			m.pending[i] = nil
			return p
		}
	}
	return nil
}

// signalIfPending wakes Start again when requests came in during a run.
func (m *Manager) signalIfPending() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending[0] != nil || m.pending[1] != nil {
		m.signal()
	}
}

func (m *Manager) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Trigger asks Start for a run and returns at once with the run's id and a
// channel that receives its summary (and is then closed; it is closed
// without a summary when the manager stops first). A run starts at once
// when none is in progress; otherwise the request is served by the next run
// after it, and requests made meanwhile are merged into that one run (dry
// runs apart from the others). See RunOptions for Force.
func (m *Manager) Trigger(opts RunOptions) (string, <-chan Summary, error) {
	if !m.cfg.Enabled {
		return "", nil, ErrDisabled
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.started {
		return "", nil, ErrNotRunning
	}
	slot := 0
	if opts.DryRun {
		slot = 1
	}
	p := m.pending[slot]
	if p == nil {
		p = &request{id: newRunID(), opts: RunOptions{DryRun: opts.DryRun}}
		m.pending[slot] = p
	}
	p.opts.Force = p.opts.Force || opts.Force
	p.opts.Reason = joinReason(p.opts.Reason, opts.Reason)
	w := make(chan Summary, 1)
	p.waiters = append(p.waiters, w)
	m.signal()
	return p.id, w, nil
}

func joinReason(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
