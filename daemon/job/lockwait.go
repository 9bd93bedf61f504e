package job

import (
	"context"

	"github.com/taskd/taskd/taskfile"
)

// StepAsideOnLock returns ctx for the job's work: whenever a write of the
// job finds a lock another writer holds (Claude Code editing the task, a
// person's taskd command), which is waited for as long as its holder
// keeps it fresh, the job steps out of line (Slot.StepAside) unless one
// of its agents runs: a claim prepared ahead no longer holds back the
// tasks of its list queued behind it, and a slot the job holds between
// agents (a parent to resume, a workflow between steps) goes to another
// task. Waiting for a lock delays only the task whose file it is. The
// job's next agent queues for a slot again.
func (j *Job) StepAsideOnLock(ctx context.Context) context.Context {
	if j.Slot == nil {
		return ctx
	}
	return taskfile.WithLockWait(ctx, func(string) {
		if j.agents.Load() == 0 {
			j.Slot.StepAside()
		}
	})
}
