package remote

import (
	"context"
	"log/slog"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// noteDelay is how long a reason to wait must last before the task file
// says it: a server that is back within it costs no write.
const noteDelay = 2 * time.Second

// A note says in a task's file why its attempt waits
// (metadata.taskd.dispatch: the server cannot be reached, no worker has
// taken it yet), and takes it away when it no longer does. taskd status
// shows it. Only the attempt's own goroutine uses it.
type note struct {
	listDir, task string
	attempt       int  // the attempt's number
	entered       bool // its cmd.json says it passed its gate
	log           *slog.Logger

	since   time.Time // since when there is a reason to wait
	written string    // what the task file says
}

// waiting records that the attempt waits for reason; the task file says
// so once there has been a reason for noteDelay.
func (n *note) waiting(reason string) {
	if n.since.IsZero() {
		n.since = time.Now()
	}
	if time.Since(n.since) < noteDelay || n.written == reason {
		return
	}
	if n.write(reason) {
		n.written = reason
	}
}

// clear records that the attempt no longer waits.
func (n *note) clear() {
	n.since = time.Time{}
	if n.written != "" && n.write("") {
		n.written = ""
	}
}

// write sets metadata.taskd.dispatch to reason (removes it if empty), if
// the task still runs the attempt (holdsAttempt: a task left starting,
// its running mark not written yet, explains its wait too). It is no
// state change: the field only explains.
func (n *note) write(reason string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dir, err := taskfile.Open(n.listDir)
	if err != nil {
		return false
	}
	_, err = dir.Update(ctx, n.task, func(t *taskfile.Task) error {
		if reason == "" || holdsAttempt(t, n.attempt, n.entered) {
			task.Change(t, func(r *task.Record) { r.Dispatch = reason })
		}
		return nil
	})
	if err != nil {
		n.log.Debug("note why an attempt waits", "task", n.task, "err", err)
		return false
	}
	if reason != "" {
		n.log.Info("an attempt waits", "task", n.task, "reason", reason)
	}
	return true
}
