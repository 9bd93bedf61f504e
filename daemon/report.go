package daemon

import (
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// The daemon's log says, at the info level, when a task starts its work
// (package job, once the claim is durable) and when it ends: one line when
// the loop sees a task it watched enter an ended state, needs_human or
// paused, as its file now says. Nothing is logged for a task first seen
// in such a state (after a restart), and nothing while the daemon idles.

// reportEnd logs that task id of list l, whose file is tf and record rec,
// entered rec's state.
func (d *Daemon) reportEnd(l *list, id string, tf *taskfile.Task, rec task.Record) {
	state := rec.State
	msg := ""
	switch {
	case state.Ended():
		msg = "task ended"
	case state == task.NeedsHuman:
		msg = "task needs a person"
	case state == task.Paused:
		msg = "task paused"
	default:
		return
	}
	args := []any{"list", l.ID, "task", id, "subject", job.LogSubject(id, tf.Subject), "outcome", string(state)}
	if ran, ok := ranFor(rec); ok {
		args = append(args, "ran", ran)
	}
	if r := reasonOf(tf, rec); r != "" && state != task.Succeeded && state != task.Cancelled {
		r, _, _ = strings.Cut(r, "; logs: ") // taskd logs LIST/ID shows them
		args = append(args, "reason", job.LogSubject("", r))
	}
	d.log.Info(msg, args...)
}

// ranFor is how long the task's last start lasted: from
// metadata.taskd.startedAt to finishedAt (or now, if it records no end),
// rounded for reading. A task that never started has none.
func ranFor(rec task.Record) (time.Duration, bool) {
	start := rec.StartedAt
	if start.IsZero() {
		return 0, false
	}
	end := time.Now()
	if at := rec.FinishedAt; !at.IsZero() && !at.Before(start) {
		end = at
	}
	d := end.Sub(start)
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond), true
	case d < time.Minute:
		return d.Round(100 * time.Millisecond), true
	}
	return d.Round(time.Second), true
}
