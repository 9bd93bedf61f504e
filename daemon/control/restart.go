package control

import (
	"context"
	"fmt"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// restartCleared are the metadata.taskd fields of a run, not its record's,
// that a restart clears: a cancel, an answer and its note.
var restartCleared = []string{"cancel", "resolve", "resolveNote"}

// clearRun clears, in rec, what a restart clears of a run besides its
// failures, error, retryAt and finishedAt: what it waited for, and where
// a loop or the loop guard had got to, how a loop ended.
func clearRun(rec *task.Record) {
	rec.Hold, rec.Boundary, rec.Wait, rec.Grant = nil, nil, nil, nil
	rec.Iteration, rec.GuardAt, rec.LoopIteration, rec.RetryOf = 0, 0, 0, 0
	rec.LoopExit = ""
}

// forkBranch refuses a workflow's fork branch: its fork is restarted.
func forkBranch(t *taskfile.Task) error {
	if p, ok := t.Metadata.String("parentTaskId"); ok && p != "" {
		return fmt.Errorf("task %s is a branch of a fork of task %s; restart task %s", t.ID, p, p)
	}
	return nil
}

// RestartTask runs task id again from its beginning. A workflow starts
// again at its first step: metadata.currentStep is cleared (the daemon
// records the first step when it starts, as a new task's) and so is the
// retry count; metadata.taskd.stepTrace keeps the earlier steps and gets a
// restart marker, after which the next step's prompt carries nothing of
// them. A loop starts again at its first iteration. Either way the run
// folders are kept, and new runs are numbered after them. A task that runs
// or waits for its children is left alone (cancel it first), and so is a
// workflow's fork branch (restart the task that forked it).
func RestartTask(ctx context.Context, dir *taskfile.Dir, id string) (*taskfile.Task, error) {
	return dir.Update(ctx, id, func(t *taskfile.Task) error {
		if err := reopen(t, id, forkBranch); err != nil {
			return err
		}
		rec := task.RecordOf(t)
		rec.Failures, rec.Error, rec.RetryAt, rec.FinishedAt = 0, "", time.Time{}, time.Time{}
		clearRun(&rec)
		if wf, _ := t.Metadata.String("workflowType"); wf != "" {
			t.Metadata.Set("currentStep", "")
			t.Metadata.Set("retryCount", 0)
			t.Metadata.Delete("forkState")
			rec.Children = nil
			marker := taskfile.NewObject()
			marker.Set("action", "restart")
			marker.Set("by", "person")
			marker.Set("at", task.Stamp(time.Now()))
			rec.StepTrace = append(rec.StepTrace, marker)
		}
		task.Store(t, rec)
		m := task.Meta(t)
		for _, k := range restartCleared {
			m.Delete(k)
		}
		return nil
	})
}
