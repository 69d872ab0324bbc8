package fleet

import (
	"context"
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// maxTasksRead is how many of a Director's newest tasks a run reads: more
// change tasks than that since the last run is a gap (a resync).
const maxTasksRead = 1000

// taskList lists a Director's tasks; nil: the task feed is not read.
type taskList func(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error)

// readTasks names the deployments of the Director's change tasks since the
// task mark (GET /tasks lists them, newest first, whether the Director
// records events or not) and moves the mark to the newest task read, or
// just before the oldest one still running (read again next run, as its
// change may not be done). An event log that stayed empty while tasks
// changed deployments is a Director that records no events. More tasks
// since the mark than a run reads is a gap.
func (w *watch) readTasks(ctx context.Context, tasks taskList, emptyEvents bool) error {
	list, err := tasks(ctx, bosh.TaskQuery{Limit: maxTasksRead})
	if err != nil {
		return fmt.Errorf("reading the Director's tasks: %w", err)
	}
	last := w.state.LastTaskID
	w.tasksRead = true
	if len(list) > 0 && list[0].ID < last { // ids went back: another Director, or its database reset
		w.taskMark = list[0].ID
		return fmt.Errorf("%w: the Director's newest task %d is before task %d, the mark (another Director, or its database reset)",
			errGap, list[0].ID, last)
	}
	mark, running := last, 0
	if len(list) > 0 {
		w.seenTask = list[0].ID
	}
	for _, t := range list {
		if t.ID <= last {
			continue
		}
		mark = max(mark, t.ID)
		if !t.Terminal() && (running == 0 || t.ID < running) {
			running = t.ID
		}
		if t.Deployment != "" {
			w.named[t.Deployment] = true
			w.report.Tasks++
		}
	}
	if running != 0 {
		mark = min(mark, running-1)
	}
	w.taskMark = mark
	w.report.NoEvents = emptyEvents && (w.report.Tasks > 0 || w.state.NoEvents)
	if last != 0 && len(list) == maxTasksRead && list[len(list)-1].ID > last+1 {
		return fmt.Errorf("%w: more than %d tasks since task %d", errGap, maxTasksRead, last)
	}
	return nil
}
