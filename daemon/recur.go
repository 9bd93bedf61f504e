package daemon

import (
	"context"
	"errors"

	"github.com/taskd/taskd/daemon/calendar"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/recur"
	"github.com/taskd/taskd/daemon/slots"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// A schedule (package recur) in the loop: it never runs itself; when its
// next time comes, a Fire job makes its run, and the loop sleeps until
// the time after.

// recurrence is what the loop keeps of a schedule: its expression, parsed,
// and the record its file holds.
type recurrence struct {
	sched *calendar.Schedule
	rec   recur.Record
}

// evaluateSchedule starts a Fire job for schedule id when a run is due
// (or its next time must be computed), and otherwise waits until its next
// time. A schedule that has ended (cancelled) makes no runs; nor does one
// whose blockers have not completed (it catches up once when they have).
func (d *Daemon) evaluateSchedule(l *list, id string, e *entry) {
	if e.state != task.None || e.status != taskfile.StatusPending || !l.blockersDone(e) {
		return
	}
	switch recur.Decide(e.recur.sched, e.recur.rec, d.clock.Now()) {
	case recur.Wait:
		l.waitUntil(id, e.recur.rec.Next)
	case recur.Never:
		d.log.Warn("the schedule has no time in the next five years: it makes no runs", "list", l.ID, "task", id, "schedule", e.recur.sched.String())
	default:
		d.startJob(l, id, job.Fire, slots.Late)
	}
}

// fire is the job that does what a schedule needs (List.Fire), and logs
// the run it made or the time it passed over.
func (d *Daemon) fire(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	dir := j.List.Dir
	var was recur.Record
	if t, err := dir.Read(j.ID); err == nil {
		was = recur.Of(t)
	}
	going := func(id string) bool {
		t, err := dir.Read(id)
		if err != nil {
			return false
		}
		return t.Status != taskfile.StatusCompleted && !task.Of(t).Ended()
	}
	t, run, err := recur.List{Config: d.cfg, Dir: dir, Going: going}.Fire(ctx, j.ID, d.clock.Now())
	if errors.Is(err, recur.ErrNothing) {
		return nil, errNotRunnable
	}
	if err != nil {
		return t, err
	}
	rec := recur.Of(t)
	switch {
	case run != "":
		j.Emit(eventlog.Event{Type: eventlog.RunScheduled, Data: map[string]any{"run": run, "at": task.Stamp(rec.Last), "missed": rec.Missed - was.Missed}})
	case rec.Skipped > was.Skipped:
		j.Emit(eventlog.Event{Type: eventlog.RunSkipped, Data: map[string]any{"at": task.Stamp(was.Next), "lastRun": rec.LastRun}})
	}
	return t, nil
}
