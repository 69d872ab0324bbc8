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
func (rn *runner) acquireLock(t *task) (outcome, bool) {
	timer := time.NewTimer(rn.lockTimeout)
	defer timer.Stop()
	uid := newUUID()
	for {
		rn.db.mu.Lock()
		held, busy := rn.db.locks[t.deployment]
		if !busy {
			rn.db.locks[t.deployment] = &lock{taskID: t.id, description: t.description, released: make(chan struct{})}
			rn.db.invalidateLocked()
			rn.rec.recordLocked(taskEvent(t, "acquire", "lock", "lock:deployment:"+t.deployment))
		}
		rn.db.mu.Unlock()
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
			return rn.stopped(t), false
		case <-rn.ctx.Done():
			return shutdown, false
		}
	}
}

func (rn *runner) releaseLock(t *task) {
	rn.db.mu.Lock()
	defer rn.db.mu.Unlock()
	if l := rn.db.locks[t.deployment]; l != nil && l.taskID == t.id {
		delete(rn.db.locks, t.deployment)
		close(l.released)
		rn.db.invalidateLocked()
		rn.rec.recordLocked(taskEvent(t, "release", "lock", "lock:deployment:"+t.deployment))
	}
}

// listLocks is GET /locks.
func (rn *runner) listLocks(w http.ResponseWriter, _ *http.Request, _ string) {
	timeout := time.Now().Add(lockRenewal)
	ts := fmt.Sprintf("%d.%06d", timeout.Unix(), timeout.Nanosecond()/1000)
	rn.db.mu.RLock()
	out := make([]lockView, 0, len(rn.db.locks))
	for name, l := range rn.db.locks {
		out = append(out, lockView{Type: "deployment", Resource: []string{name}, Timeout: ts, TaskID: strconv.Itoa(l.taskID)})
	}
	rn.db.mu.RUnlock()
	slices.SortFunc(out, func(a, b lockView) int { return strings.Compare(a.Resource[0], b.Resource[0]) })
	writeJSON(w, http.StatusOK, out)
}
