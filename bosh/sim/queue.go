package sim

import "slices"

// taskQueue gives the Director's workers to tasks in the order they were
// created, as the real Director's delayed_job workers take the oldest
// queued task of the queues they serve: a task created later never runs
// before an earlier one still queued that the same worker could take.
// Every worker serves the normal and the urgent queue (a vm-state task is
// urgent: cloudfoundry/bosh src/bosh-director/lib/bosh/director/jobs/vm_state.rb:6)
// and takes them by age alone (delayed_job's default priority, job_queue.rb:13);
// with director.enable_dedicated_status_worker and more than one worker, the
// first serves the urgent queue alone (jobs/director/templates/bpm.yml:55-59,
// jobs/director/spec:81-83). Its fields are guarded by store.mu.
type taskQueue struct {
	workers int     // how many tasks may run at once
	status  bool    // the first worker serves the urgent queue alone
	running int     // tasks a general worker took that have not ended
	urgent  bool    // the status worker runs a task
	waiting []*task // queued tasks, oldest first
}

// urgent says whether a task is on the urgent queue.
func (t *task) urgent() bool { return t.kind == kindVMState }

// dedicated says whether the queue has a worker of the urgent queue alone.
func (q *taskQueue) dedicated() bool { return q.status && q.workers > 1 }

// enqueueLocked queues a new task, or gives it a free worker at once.
func (q *taskQueue) enqueueLocked(t *task) {
	q.waiting = append(q.waiting, t)
	q.admitLocked()
}

// admitLocked gives free workers to the oldest waiting tasks they serve:
// the status worker to the oldest urgent one, the others to the oldest.
func (q *taskQueue) admitLocked() {
	if q.dedicated() && !q.urgent {
		if i := slices.IndexFunc(q.waiting, (*task).urgent); i >= 0 {
			t := q.waiting[i]
			q.waiting = slices.Delete(q.waiting, i, i+1)
			q.urgent, t.statusWorker = true, true
			close(t.admit)
		}
	}
	general := q.workers
	if q.dedicated() {
		general--
	}
	for q.running < general && len(q.waiting) > 0 {
		t := q.waiting[0]
		q.waiting = q.waiting[1:]
		q.running++
		close(t.admit)
	}
}

// withdraw takes a task that no worker took yet out of the queue (a cancel
// of a queued task, a Director closing); false if a worker took it.
func (rn *runner) withdraw(t *task) bool {
	rn.db.mu.Lock()
	defer rn.db.mu.Unlock()
	i := slices.Index(rn.db.queue.waiting, t)
	if i < 0 {
		return false
	}
	rn.db.queue.waiting = slices.Delete(rn.db.queue.waiting, i, i+1)
	return true
}

// release gives a task's worker back, to the oldest waiting task it serves.
func (rn *runner) release(t *task) {
	rn.db.mu.Lock()
	defer rn.db.mu.Unlock()
	if t.statusWorker {
		rn.db.queue.urgent = false
	} else {
		rn.db.queue.running--
	}
	rn.db.queue.admitLocked()
}
