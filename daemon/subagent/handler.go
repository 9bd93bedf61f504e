package subagent

import (
	"context"
	"fmt"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Tasks is the job.Handler of tasks a subagent command holds: one
// suspended by a /handoff or /converge line whose wait is over, and one
// whose handoff or converge question a person answered.
type Tasks struct{}

var _ job.Handler = Tasks{}

// Owns reports whether the job of kind on task t is the subagent
// commands': releasing a suspended task, or taking the answer to their
// question.
func Owns(kind job.Kind, t *taskfile.Task) bool {
	switch kind {
	case job.Resume:
		return t.Metadata.Object("forkState") == nil && WaitOf(t) != nil
	case job.Answer:
		_, ok := hitlOf(t)
		return ok && task.Of(t) == task.NeedsHuman
	}
	return false
}

// Do implements job.Handler.
func (Tasks) Do(ctx context.Context, j *job.Job, t *taskfile.Task) (*taskfile.Task, error) {
	switch j.Kind {
	case job.Resume:
		return Release(ctx, j)
	case job.Answer:
		if t, err, ok := Answer(ctx, j); ok {
			return t, err
		}
		return nil, job.ErrNotRunnable
	}
	return nil, fmt.Errorf("%s of a subagent wait: %w", j.Kind, job.ErrNoHandler)
}

// Leading is a task's prompt as its leading command lines are run, before
// its agent starts (/delegate, /handoff, /converge): the job, the task, its
// spec, the parsed prompt, and the sections the lines add after its
// content (a handed-off child's result, a converged result), which its
// agent is given.
type Leading struct {
	Job     *job.Job
	Task    *taskfile.Task
	Spec    task.Spec
	Script  *prompt.Script
	Results *[]string
}

// A Parent is the task ID of list Dir, under configuration Config, whose
// agent delegates to children, hands off to one, or converges several
// (the commands taskd delegate, handoff and converge, and the prompt lines
// of the same names).
type Parent struct {
	Config *config.Config
	Dir    *taskfile.Dir
	ID     string
}
