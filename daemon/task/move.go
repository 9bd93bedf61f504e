package task

import (
	"fmt"

	"github.com/taskd/taskd/taskfile"
)

// Of returns the state task t's file records (metadata.taskd.state); a
// nil task has none.
func Of(t *taskfile.Task) State {
	if t == nil {
		return None
	}
	s, _ := t.Metadata.Object("taskd").String("state")
	return State(s)
}

// Apply applies ev to task t in memory, with rec, the whole record the
// event leaves (its attempt, times, error, result, hold): it computes the
// next state with Next from the state the file records, writes it in
// metadata.taskd.state and in the file's status (a fork branch that
// reaches its join as every task: completed when it passed, pending, as a
// failure, when it failed; a stopped workflow keeps its status), and
// stores rec's other fields (Store). On an illegal event nothing changes.
// Nothing is written to disk: the caller writes t, then performs the
// effects.
func Apply(t *taskfile.Task, ev Event, rec Record) (Effects, error) {
	return apply(t, Of(t), ev, rec)
}

// End applies ev, the end of an attempt that ran, to task t with rec as
// Apply does, but from Running whatever state another writer left in the
// file while the agent ran (an agent that rewrote its own task file,
// say): the attempt ran, and its end is recorded.
func End(t *taskfile.Task, ev Event, rec Record) (Effects, error) {
	return apply(t, Running, ev, rec)
}

// Move is Apply with the record t holds: only the state changes.
func Move(t *taskfile.Task, ev Event) (Effects, error) {
	return Apply(t, ev, RecordOf(t))
}

func apply(t *taskfile.Task, from State, ev Event, rec Record) (Effects, error) {
	to, eff, err := Next(from, ev)
	if err != nil {
		return 0, fmt.Errorf("task %s: %w", t.ID, err)
	}
	m := Meta(t)
	if to == None {
		m.Delete("state")
	} else {
		m.Set("state", string(to))
	}
	if to != Stopped {
		t.Status = statusOf(to)
	}
	Store(t, rec)
	return eff, nil
}

// Begin gives a task that is being created (not yet on disk) its first
// state: None; Queued, for a child that waits for /run or its turn; or
// Failed, for a child refused as it is made (it never runs, and its
// failure still reaches its parent). Any other state is an error.
func Begin(t *taskfile.Task, s State) error {
	switch s {
	case None, Queued, Failed:
	default:
		return fmt.Errorf("task %s: a new task cannot be %s: %w", t.ID, s, ErrIllegal)
	}
	t.Status = taskfile.StatusPending
	if s != None {
		Meta(t).Set("state", string(s))
	}
	return nil
}

// Archive marks an ended child archived: kept on disk with its results,
// no longer counted by its parent. Its state, and its status, stay as it
// ended: a child that failed does not show as completed.
func Archive(t *taskfile.Task) error {
	if s := Of(t); !s.Ended() {
		return fmt.Errorf("task %s: a %s task cannot be archived: %w", t.ID, s, ErrIllegal)
	}
	rec := RecordOf(t)
	rec.Archived = true
	Store(t, rec)
	return nil
}
