package task

import "github.com/taskd/taskd/taskfile"

// A State is a task's metadata.taskd.state: where taskd is with it. The
// zero value, None, is a task accepted and waiting for its turn.
type State string

// The states of a task (docs/tasks.md).
const (
	None       State = ""            // pending: waiting for its turn (or new)
	Queued     State = "queued"      // a child waiting for /run or its turn in a sequence
	Starting   State = "starting"    // claimed ahead of a slot: its attempt is prepared, its agent waits for the slot
	Running    State = "running"     // claimed: an attempt, a step or a resumption runs
	Waiting    State = "waiting"     // waiting for its children (or a handed-off task)
	NeedsHuman State = "needs_human" // waiting for a person's answer (metadata.taskd.resolve)
	Retrying   State = "retrying"    // failed; runs again at metadata.taskd.retryAt
	Paused     State = "paused"      // its agent met a usage limit; resumes at metadata.taskd.retryAt
	Succeeded  State = "succeeded"
	Failed     State = "failed"
	Cancelled  State = "cancelled"
	TimedOut   State = "timed_out"
	Stopped    State = "stopped" // a workflow stopped by its loop guard
)

// States lists every state, in the order above.
var States = []State{None, Queued, Starting, Running, Waiting, NeedsHuman, Retrying, Paused, Succeeded, Failed, Cancelled, TimedOut, Stopped}

// Known reports whether s is one of States.
func (s State) Known() bool {
	for _, k := range States {
		if s == k {
			return true
		}
	}
	return false
}

// Ended reports whether a task in state s has ended for its parent: it
// will do nothing more unless a person starts it again.
func (s State) Ended() bool {
	switch s {
	case Succeeded, Failed, Cancelled, TimedOut, Stopped:
		return true
	}
	return false
}

// Active reports whether a task in state s has work under way that a
// daemon owns: an attempt running or about to start, or children it
// waits for.
func (s State) Active() bool { return s == Running || s == Starting || s == Waiting }

// Claimed reports whether a task in state s is claimed for an attempt: its
// agent runs (Running) or waits for its slot (Starting). A daemon that
// finds one it does not run recovers it.
func (s State) Claimed() bool { return s == Running || s == Starting }

// String returns the state as written in task files ("" for None).
func (s State) String() string { return string(s) }

// statusOf is the task file status a task has in state s: in_progress while
// it runs or waits for children, completed once it succeeded, pending
// otherwise (waiting for its turn — also while starting, claimed but
// waiting for a slot —, a person, or a retry; or ended without success).
// A stopped workflow keeps the status it had, as flow leaves it.
func statusOf(s State) string {
	switch s {
	case Running, Waiting:
		return taskfile.StatusInProgress
	case Succeeded:
		return taskfile.StatusCompleted
	}
	return taskfile.StatusPending
}
