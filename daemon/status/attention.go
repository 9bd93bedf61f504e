package status

import (
	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/daemon/task"
)

// A Below is a task under another that needs a person, failed or is held:
// taskd status marks each task on the path up to it.
type Below struct {
	ID    string `json:"id"`
	State string `json:"state"` // needs_human, failed, timed_out, stopped or held
}

// Attend marks, in lists, the tasks a running daemon holds (heldTasks, as
// package held publishes them), and on each task above one that needs a
// person, failed or is held, that task (Below).
func Attend(lists []List, heldTasks []held.Task) {
	for i := range lists {
		l := &lists[i]
		byID := make(map[string]*Task, len(l.Tasks))
		for k := range l.Tasks {
			byID[l.Tasks[k].ID] = &l.Tasks[k]
		}
		for _, h := range heldTasks {
			if t := byID[h.ID]; t != nil && h.List == l.ID {
				t.Held, t.HeldRetry = h.Reason, h.Retry
			}
		}
		for k := range l.Tasks {
			t := &l.Tasks[k]
			state := attention(t)
			if state == "" {
				continue
			}
			seen := map[string]bool{t.ID: true}
			for p := byID[t.Parent]; p != nil && !seen[p.ID]; p = byID[p.Parent] {
				seen[p.ID] = true
				p.Below = append(p.Below, Below{ID: t.ID, State: state})
			}
		}
	}
}

// attention returns why task t needs attention ("" if it does not).
func attention(t *Task) string {
	if t.Held != "" {
		return "held"
	}
	switch task.State(t.State) {
	case task.NeedsHuman, task.Failed, task.TimedOut, task.Stopped:
		if !t.Archived {
			return t.State
		}
	}
	return ""
}
