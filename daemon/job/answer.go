package job

import (
	"context"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// A person answers a task that waits for one through
// metadata.taskd.resolve; the answers every kind of task takes the same
// way are here (a permission question's are in permission.go).

// KeepWaiting records a "leave" answer: the task keeps waiting for a
// person, the answer is consumed.
func (j *Job) KeepWaiting(ctx context.Context) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	t, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		task.Meta(t).Delete("resolve")
		return nil
	})
	if err == nil {
		l.Events.Append(eventlog.Event{Type: eventlog.HumanResolved, List: l.ID, Task: id, Step: currentStepOf(t), Data: map[string]any{"answer": "leave"}})
	}
	return t, err
}

func currentStepOf(t *taskfile.Task) string {
	if t == nil {
		return ""
	}
	s, _ := t.Metadata.String("currentStep")
	return s
}
