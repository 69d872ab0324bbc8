package fleet

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// listed is a task list of the Director's answer, newest first.
func listed(tasks ...bosh.Task) taskList {
	return func(context.Context, bosh.TaskQuery) ([]bosh.Task, error) { return tasks, nil }
}

func TestReadTasks(t *testing.T) {
	done := func(id int, dep string) bosh.Task { return bosh.Task{ID: id, State: bosh.TaskDone, Deployment: dep} }
	running := func(id int, dep string) bosh.Task { return bosh.Task{ID: id, State: "processing", Deployment: dep} }
	for _, c := range []struct {
		name     string
		last     int
		tasks    []bosh.Task
		empty    bool
		named    []string
		mark     int
		gap      bool
		noEvents bool
	}{
		{"names the deployments since the mark", 10, []bosh.Task{done(13, "b"), done(12, "a"), done(10, "old")}, false, []string{"a", "b"}, 13, false, false},
		{"stops the mark before the oldest task running", 10, []bosh.Task{done(14, "c"), running(12, "a"), done(11, "b")}, false, []string{"a", "b", "c"}, 11, false, false},
		{"an empty event log while tasks change deployments: no events recorded", 10, []bosh.Task{done(11, "a")}, true, []string{"a"}, 11, false, true},
		{"an empty event log and no task: nothing to tell", 10, nil, true, nil, 10, false, false},
		{"ids that went back: another Director", 500, []bosh.Task{done(12, "a")}, false, nil, 12, true, false},
	} {
		w := &watch{named: map[string]bool{}, health: map[string]bool{}, state: feedState{LastTaskID: c.last}}
		err := w.readTasks(context.Background(), listed(c.tasks...), c.empty)
		if got := slices.Sorted(maps.Keys(w.named)); !slices.Equal(got, c.named) {
			t.Errorf("%s: named %v, want %v", c.name, got, c.named)
		}
		if w.taskMark != c.mark {
			t.Errorf("%s: mark %d, want %d", c.name, w.taskMark, c.mark)
		}
		if errors.Is(err, errGap) != c.gap {
			t.Errorf("%s: err %v, want a gap %v", c.name, err, c.gap)
		}
		if w.report.NoEvents != c.noEvents {
			t.Errorf("%s: no_events %v, want %v", c.name, w.report.NoEvents, c.noEvents)
		}
		if len(c.tasks) > 0 && !c.gap && w.seenTask != c.tasks[0].ID {
			t.Errorf("%s: the newest task seen %d, want %d (the watch between runs looks past it)", c.name, w.seenTask, c.tasks[0].ID)
		}
		if !w.tasksRead {
			t.Errorf("%s: the task feed read is not marked read", c.name)
		}
	}

	full := make([]bosh.Task, maxTasksRead)
	for i := range full {
		full[i] = done(5000-i, "d")
	}
	w := &watch{named: map[string]bool{}, health: map[string]bool{}, state: feedState{LastTaskID: 10}}
	if err := w.readTasks(context.Background(), listed(full...), false); !errors.Is(err, errGap) {
		t.Errorf("more tasks since the mark than a run reads: %v, want a gap", err)
	}
}
