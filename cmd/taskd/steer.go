package main

import (
	"context"

	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/taskfile"
)

// This file holds how a person steers a workflow or a loop: restart it
// from its first step, and answer it with a note (runResolve, tasks.go).
// docs/workflows.md, "Steering a workflow", describes them together.

func init() {
	register(&command{
		name:  "restart",
		usage: "[--root DIR] LIST/ID...",
		short: "run tasks again from their first step",
		group: "Tasks",
		long: `
Restart runs each task again from its beginning: a workflow from its first
step, a loop from its first iteration. Unlike 'taskd retry', which runs a
task again from where it is (a workflow's current step), restart clears
where the task had got to: a workflow's current step and retry count, the
loop guard's count, a loop's iteration, a question waiting for a person,
the last error. The history stays: the step trace keeps the earlier steps
(with a restart marker after them, so that the next prompts carry nothing
of them) and every run folder is kept; new runs are numbered after the old
ones. Children and return tasks the task made before are not restarted.

` + taskNames + `

A task that does not exist,
is not taskd's, is running or waiting for its children (cancel it first),
or is a branch of a workflow's fork (restart the task that forked it) is
reported on standard error and left alone; the others are still
restarted, and the exit status is 1.
`,
		run: func(ctx context.Context, inv *invocation) error {
			return taskEdit(ctx, inv, "will run from its first step", func(dir *taskfile.Dir, id string) (*taskfile.Task, error) {
				return control.RestartTask(ctx, dir, id)
			})
		},
	})
}
