package task

import (
	"fmt"

	"github.com/taskd/taskd/taskfile"
)

// Of returns the state task t's file records (metadata.taskd.state).
func Of(t *taskfile.Task) State {
	s, _ := t.Metadata.Object("taskd").String("state")
	return State(s)
}

// Move applies ev to task t in memory: it computes the next state with
// Next and records it in metadata.taskd.state and in the file's status. A
// fork branch that reaches its join is completed whichever way it went (its
// parent reads how from branchResult); a stopped workflow keeps its status.
// Nothing is written to disk: the caller writes t, then performs the
// effects.
func Move(t *taskfile.Task, ev Event) (Effects, error) {
	from := Of(t)
	to, eff, err := Next(from, ev)
	if err != nil {
		return 0, fmt.Errorf("task %s: %w", t.ID, err)
	}
	m := t.EnsureMetadata().EnsureObject("taskd")
	if to == None {
		m.Delete("state")
	} else {
		m.Set("state", string(to))
	}
	switch {
	case ev == BranchPass || ev == BranchFail:
		t.Status = taskfile.StatusCompleted
	case to == Stopped:
	default:
		t.Status = statusOf(to)
	}
	return eff, nil
}

// Begin gives a task that is being created (not yet on disk) its first
// state: None, or Queued for a child that waits for /run or its turn.
func Begin(t *taskfile.Task, queued bool) {
	t.Status = taskfile.StatusPending
	if queued {
		t.EnsureMetadata().EnsureObject("taskd").Set("state", string(Queued))
	}
}
