package daemon

import (
	"context"
	"fmt"

	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// deliverResult sends an ended child's result to its parent's inbox (once:
// the message is keyed by child and attempt, and the child is marked
// delivered afterwards), then releases the parent's next sequential child.
func deliverResult(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	t, err := l.Dir.Read(id)
	if err != nil {
		return nil, err
	}
	m := t.Metadata.Object("taskd")
	parent, _ := m.String("parent")
	state := task.Of(t)
	if parent == "" || task.RecordOf(t).Delivered || !state.Ended() {
		return nil, errNotRunnable
	}
	msg := children.ResultMessage(l.Dir, t)
	attempt := task.RecordOf(t).Attempt
	if err := children.InboxOf(l.Dir.Path(), parent).Deliver(msg, fmt.Sprintf("result-%s-%d", id, attempt)); err != nil {
		return nil, fmt.Errorf("deliver the result of %s to %s: %w", id, parent, err)
	}
	l.Events.Append(eventlog.Event{Type: eventlog.MessageDelivered, List: l.ID, Task: parent, Data: map[string]any{"from": id, "name": msg.Name, "success": *msg.Success}})
	subagent.Ended(ctx, j, t) // subagent and handoff events, before delivered is set
	t, err = l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		task.Change(t, func(r *task.Record) { r.Delivered = true })
		subagent.MarkEndReported(t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := children.ReleaseNext(ctx, l.Dir, parent); err != nil {
		j.Log.Warn("release the next sequential child", "list", l.ID, "task", parent, "err", err)
	}
	return t, nil
}
