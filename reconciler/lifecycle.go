package reconciler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/run"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// runLoop makes the runs: one at once, then one every Config.Interval, and
// those asked for (Trigger, the watch, this daemon becoming the leader). It
// holds what it uses, not the Manager: the run's parts, the queue, the run
// lock, leadership, the published status and the run log, and the fleet
// upgrades it hands each run's summary to.
type runLoop struct {
	cfg      config.ReconcilerConfig
	log      *slog.Logger
	now      func() time.Time
	parts    *run.Parts
	queue    *queue
	runLock  chan struct{}   // one slot, held by the run in progress (or a rollback)
	lead     <-chan struct{} // this daemon became the leader
	leading  func() bool
	status   *published
	runLog   runLog
	upgrades interface{ background(report.Summary) }
}

// Serve runs the reconciler until ctx ends: one run at once, then one every
// Config.Interval, and those asked for with Trigger. When ctx ends it waits
// for the run in progress up to Config.StopTimeout, then cancels it (the
// instance being written is finished, nothing is left half-written) and
// returns. With reconciler.enabled false it runs nothing and just waits.
// Serving it twice at once is ErrAlreadyStarted.
func (l *runLoop) Serve(ctx context.Context) error {
	if !l.cfg.Enabled {
		l.log.Info("reconciler disabled")
		<-ctx.Done()
		return nil
	}
	if err := l.queue.setStarted(true); err != nil {
		return err
	}
	defer func() { _ = l.queue.setStarted(false) }() // stopping cannot fail
	l.status.follow(ctx, l.runLog)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		var req *request
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
			req = l.queue.scheduled()
			if !l.leading() { // a follower: the leader runs; becoming it wakes us
				timer.Reset(l.cfg.Interval)
				continue
			}
		case <-l.lead:
			req = l.queue.scheduled()
			req.opts.Reason = "this daemon became the leader"
		case <-l.queue.wake:
			req = l.queue.take()
		}
		if req == nil {
			continue
		}
		start := l.now()
		s := l.serve(ctx, req)
		if ctx.Err() != nil {
			return nil
		}
		l.upgrades.background(s)
		if !req.opts.DryRun {
			timer.Reset(max(0, l.cfg.Interval-l.now().Sub(start)))
		}
		l.queue.signalIfPending()
	}
}

// serve makes one run for req and hands its summary to every waiter. When
// ctx ends during the run, the run gets Config.StopTimeout to finish before
// it is cancelled.
func (l *runLoop) serve(ctx context.Context, req *request) report.Summary {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	done := make(chan report.Summary, 1)
	go func() { done <- l.runLocked(runCtx, req.id, req.opts) }()
	var s report.Summary
	select {
	case s = <-done:
	case <-ctx.Done():
		s = awaitStop(l.log, l.cfg.StopTimeout, done, cancel)
	}
	for _, w := range req.waiters {
		w <- s
		close(w)
	}
	return s
}

// awaitStop waits for the run up to Config.StopTimeout, then cancels it and
// waits for it to return.
func awaitStop(log *slog.Logger, timeout time.Duration, done <-chan report.Summary, cancel context.CancelFunc) report.Summary {
	log.Info("reconciler stopping: waiting for the run in progress", "timeout", timeout)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case s := <-done:
		return s
	case <-t.C:
		log.Warn("reconciler stop timeout: cancelling the run in progress")
		cancel()
		return <-done
	}
}

// RunOnce makes one run now in the caller's goroutine (used by `blacksmith
// reconcile --dry-run` and the bench) and returns its summary. It waits for
// a run in progress to end first: runs never overlap. The error is set when
// the run could not be made or could not complete (listing or index failed,
// ctx ended); per-instance errors are in Summary.Errors only. With HA, it
// refuses (NotLeaderError) unless this daemon leads, or, in a command that
// runs once, can take the lease for the run.
func (m *Manager) RunOnce(ctx context.Context, opts report.RunOptions) (report.Summary, error) {
	if !opts.DryRun {
		release, err := m.holdLease(ctx)
		if err != nil {
			return report.Summary{DryRun: opts.DryRun, StartedAt: m.now(), Errors: []string{err.Error()}, Aborted: err}, err
		}
		defer release()
	}
	s := m.runs.runLocked(ctx, newRunID(), opts)
	if s.Aborted != nil {
		return s, s.Aborted
	}
	return s, nil
}

// runLocked waits for the run lock, then makes the run.
func (l *runLoop) runLocked(ctx context.Context, id string, opts report.RunOptions) report.Summary {
	select {
	case l.runLock <- struct{}{}:
	case <-ctx.Done():
		err := fmt.Errorf("waiting for the run in progress: %w", ctx.Err())
		return report.Summary{RunID: id, DryRun: opts.DryRun, StartedAt: l.now(), Errors: []string{err.Error()}, Aborted: err}
	}
	defer func() { <-l.runLock }()
	progress := &memory.Progress{}
	l.status.setCurrent(id, progress)
	defer l.status.setCurrent("", nil)
	res := run.Run(ctx, *l.parts, run.Request{ID: id, Options: opts, Known: l.status.knownConflicts(), Progress: progress})
	s := res.Summary
	if !s.DryRun {
		l.status.finished(res)
		if s.Aborted != nil {
			l.log.Warn("reconciler run aborted", "run", s.RunID, "error", fmt.Sprint(s.Aborted))
		}
		l.runLog.append(s)
	}
	return s
}

// Trigger asks the runs' loop for a run and returns at once with the run's
// id and a channel that receives its summary (and is then closed; it is
// closed without a summary when the loop stops first). A run starts at once
// when none is in progress; otherwise the request is served by the next run
// after it, and requests made meanwhile are merged into that one run (dry
// runs apart from the others). See RunOptions for Force.
func (m *Manager) Trigger(opts report.RunOptions) (string, <-chan report.Summary, error) {
	if !m.cfg.Enabled {
		return "", nil, ErrDisabled
	}
	if !m.elector.leading() {
		id, since := m.elector.leader()
		return "", nil, &NotLeaderError{Leader: id, Since: since}
	}
	return m.queue.add(opts)
}

// newRunID returns a random run id.
func newRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
