package sim

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// lockRenewal is how far ahead of now a held lock's timeout is shown: the
// Director keeps renewing the locks of running tasks.
const lockRenewal = 10 * time.Second

// lock is a deployment lock held by a running task.
type lock struct {
	taskID      int
	description string
	released    chan struct{}
}

// lockView is a lock as GET /locks shows it.
type lockView struct {
	Type     string   `json:"type"`
	Resource []string `json:"resource"`
	Timeout  string   `json:"timeout"`
	TaskID   string   `json:"task_id"`
}

// acquireLock takes the task's deployment lock, waiting up to the lock
// timeout for the task that holds it, as the Director does.
func (d *Director) acquireLock(t *task) (outcome, bool) {
	timer := time.NewTimer(d.opts.LockTimeout)
	defer timer.Stop()
	uid := newUUID()
	for {
		d.mu.Lock()
		held, busy := d.locks[t.deployment]
		if !busy {
			d.locks[t.deployment] = &lock{taskID: t.id, description: t.description, released: make(chan struct{})}
			d.invalidateLocked()
			d.recordLocked(taskEvent(t, "acquire", "lock", "lock:deployment:"+t.deployment))
		}
		d.mu.Unlock()
		if !busy {
			return outcome{}, true
		}
		if t.kind == kindScanFix { // ScanAndFix takes the lock with timeout 0
			return outcome{StateError, "Unable to get deployment lock, maybe a deployment is in progress. Try again later.", codeDirector}, false
		}
		select {
		case <-held.released:
		case <-timer.C:
			return outcome{StateError, fmt.Sprintf("Failed to acquire lock for lock:deployment:%s uid: %s. Locking task id is %d, description: '%s'",
				t.deployment, uid, held.taskID, held.description), codeDirector}, false
		case <-t.cancel:
			return d.stopped(t), false
		case <-d.ctx.Done():
			return shutdown, false
		}
	}
}

func (d *Director) releaseLock(t *task) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l := d.locks[t.deployment]; l != nil && l.taskID == t.id {
		delete(d.locks, t.deployment)
		close(l.released)
		d.invalidateLocked()
		d.recordLocked(taskEvent(t, "release", "lock", "lock:deployment:"+t.deployment))
	}
}

// listLocks is GET /locks.
func (d *Director) listLocks(w http.ResponseWriter, _ *http.Request, _ string) {
	timeout := time.Now().Add(lockRenewal)
	ts := fmt.Sprintf("%d.%06d", timeout.Unix(), timeout.Nanosecond()/1000)
	d.mu.RLock()
	out := make([]lockView, 0, len(d.locks))
	for name, l := range d.locks {
		out = append(out, lockView{Type: "deployment", Resource: []string{name}, Timeout: ts, TaskID: strconv.Itoa(l.taskID)})
	}
	d.mu.RUnlock()
	slices.SortFunc(out, func(a, b lockView) int { return strings.Compare(a.Resource[0], b.Resource[0]) })
	writeJSON(w, http.StatusOK, out)
}
