package sim

import "slices"

// taskQueue gives the Director's workers to tasks in the order they were
// created, as the real Director's delayed_job workers take the oldest
// queued task first: a task created later never runs before an earlier one
// still queued. Its fields are guarded by Director.mu.
type taskQueue struct {
	workers int     // how many tasks may run at once
	running int     // tasks a worker took that have not ended
	waiting []*task // queued tasks, oldest first
}

// enqueueLocked queues a new task, or gives it a free worker at once.
func (q *taskQueue) enqueueLocked(t *task) {
	q.waiting = append(q.waiting, t)
	q.admitLocked()
}

// admitLocked gives free workers to the oldest waiting tasks.
func (q *taskQueue) admitLocked() {
	for q.running < q.workers && len(q.waiting) > 0 {
		t := q.waiting[0]
		q.waiting = q.waiting[1:]
		q.running++
		close(t.admit)
	}
}

// withdraw takes a task that no worker took yet out of the queue (a cancel
// of a queued task, a Director closing); false if a worker took it.
func (d *Director) withdraw(t *task) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.Index(d.queue.waiting, t)
	if i < 0 {
		return false
	}
	d.queue.waiting = slices.Delete(d.queue.waiting, i, i+1)
	return true
}

// release gives a task's worker back, to the oldest waiting task.
func (d *Director) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.queue.running--
	d.queue.admitLocked()
}
