// Package recur is a recurring task: a task file whose
// metadata.taskd.schedule is a cron expression (package calendar) is a
// schedule, which never runs an agent itself; at each of its times a run
// is made, a child task of its own id and run folder that takes the
// schedule's prompt and settings (package children). What the schedule's
// file records of its runs, metadata.taskd.recurrence, is a Record; Fire
// makes the run that is due. The daemon's loop decides when (docs/scheduling.md).
//
// Each run is made exactly once. Fire records the time a run is made for
// (Record.Firing) durably in the schedule's file before it creates the
// run's file, and the run records it too (metadata.taskd.scheduledFor);
// then the schedule records the run as made. After a crash between the
// two writes, the schedule still says Firing: the next Fire looks for a
// run made for that time before it makes one. A crash can therefore
// neither make a run twice nor lose one it had decided to make.
//
// Times missed while no daemon ran are caught up by one run, as soon as a
// daemon runs again, never one run per time missed; the run counts them
// (Record.Missed). A time that comes while the last run still goes is
// passed over (Record.Skipped), unless the schedule says overlap.
package recur

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/taskd/taskd/daemon/calendar"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// A Record is what a schedule's file says of its runs
// (metadata.taskd.recurrence), written by the daemon only.
type Record struct {
	// For is the schedule Next was computed for: a person who changes the
	// schedule gets a Next of the new one.
	For string `json:"for"`
	// Next is when the next run is due.
	Next time.Time `json:"next,omitzero"`
	// Firing is the time a run is being made for: written before the
	// run's file, cleared once the run is recorded.
	Firing time.Time `json:"firing,omitzero"`
	// Last is the time the last run was made for, LastRun its id.
	Last    time.Time `json:"last,omitzero"`
	LastRun string    `json:"lastRun,omitempty"`
	// Runs counts the runs made, Skipped the times passed over while a
	// run went on, Missed the times no daemon ran at (each catch-up run
	// stands for one or more of them).
	Runs    int `json:"runs,omitempty"`
	Skipped int `json:"skipped,omitempty"`
	Missed  int `json:"missed,omitempty"`
}

// maxMissed bounds the count of the times a schedule missed in one
// downtime (an "@every 1s" schedule stopped for a year).
const maxMissed = 100000

// Of returns the record task t holds (the zero Record if none).
func Of(t *taskfile.Task) Record {
	var r Record
	if o := task.RecordOf(t).Recurrence; o != nil {
		json.Unmarshal(taskfile.AppendJSON(nil, o), &r)
	}
	return r
}

// set writes r into t.
func set(t *taskfile.Task, r Record) {
	data, _ := json.Marshal(r)
	v, err := taskfile.ParseValue(data)
	if o, ok := v.(*taskfile.Object); err == nil && ok {
		task.Change(t, func(rec *task.Record) { rec.Recurrence = o })
	}
}

// Inherited are the fields of metadata.taskd a run takes from its
// schedule, besides those every child takes from its parent
// (task.Inherited) and its prompt.
var Inherited = []string{"retries", "maxTurns", "maxCostUsd", "onDenied", "systemPrompt", "priority", "repo", "ref", "genericReturn", "onBlockerFailure"}

// A Decision is what Decide says a schedule needs at a time.
type Decision int

const (
	Wait    Decision = iota // nothing until Record.Next
	Due                     // a run is due, or one being made must be finished
	Restart                 // Next must be computed (a new or changed schedule)
	Never                   // the schedule has no time (in the next five years): nothing to do
)

// Decide says what schedule s, whose file records r, needs at now.
func Decide(s *calendar.Schedule, r Record, now time.Time) Decision {
	switch {
	case !r.Firing.IsZero():
		return Due
	case r.For != s.String():
		return Restart
	case r.Next.IsZero():
		if s.Next(now).IsZero() {
			return Never // computed again, it would be none again
		}
		return Restart
	case now.Before(r.Next) && s.Next(now).Before(r.Next):
		// A time of the schedule comes before Next: Next was computed
		// on a clock since set back (a next time is never after the
		// schedule's first time after the moment it is computed).
		return Restart
	case !now.Before(r.Next):
		return Due
	}
	return Wait
}

// ErrNothing ends a Fire that had nothing to do: the schedule changed, or
// its time has not come.
var ErrNothing = errors.New("nothing is due")

// Going reports whether the run of id is still going: its file is there
// and it has not ended.
type Going func(id string) bool

// A List is the schedules of one task list, as Fire makes their runs:
// the list's directory, the daemon's configuration (the runs' defaults)
// and what says whether a run still goes.
type List struct {
	Config *config.Config
	Dir    *taskfile.Dir
	Going  Going
}

// Fire does what schedule id of the list needs at now (Decide): it
// computes its next time, or makes the run that is due, or finishes
// making one a crash cut short, or passes over a time while the last run
// goes on (Going says whether it does). It returns the schedule's file as
// it wrote it and the id of the run it made ("" if none); ErrNothing when
// nothing was due.
func (l List) Fire(ctx context.Context, id string, now time.Time) (*taskfile.Task, string, error) {
	cfg, dir, going := l.Config, l.Dir, l.Going
	var rec Record
	var sched *calendar.Schedule
	recovering := false
	t, err := dir.Update(ctx, id, func(t *taskfile.Task) error {
		sp, err := task.ReadSpec(t)
		if err != nil || sp.Schedule == "" || sp.Cancel || sp.State != task.None || t.Status != taskfile.StatusPending && t.Status != "" {
			return ErrNothing
		}
		if sched, err = calendar.ParseSchedule(sp.Schedule); err != nil {
			return ErrNothing // rejected by the loop
		}
		rec = Of(t)
		switch Decide(sched, rec, now) {
		case Wait, Never:
			return ErrNothing
		case Restart:
			rec = Record{For: sched.String(), Next: sched.Next(now), Last: rec.Last, LastRun: rec.LastRun, Runs: rec.Runs, Skipped: rec.Skipped, Missed: rec.Missed}
			set(t, rec)
			return nil
		}
		if !rec.Firing.IsZero() {
			recovering = true
			return errUnchanged
		}
		if !sp.Overlap && rec.LastRun != "" && going(rec.LastRun) {
			rec.Skipped++
			rec.Next = after(sched, rec.Next, now)
			set(t, rec)
			return nil
		}
		rec.Missed += sched.Missed(rec.Next, now, maxMissed)
		rec.Firing = rec.Next
		set(t, rec)
		return nil
	})
	switch {
	case errors.Is(err, errUnchanged):
		t, err = dir.Read(id)
	case err != nil:
		return nil, "", err
	}
	if err != nil {
		return nil, "", err
	}
	if rec.Firing.IsZero() {
		return t, "", nil // a new next time, or a time passed over
	}
	runID := ""
	if recovering {
		runID = madeFor(dir, id, rec.Firing)
	}
	if runID == "" {
		run, err := makeRun(ctx, cfg, dir, t, rec.Firing)
		if err != nil {
			return nil, "", fmt.Errorf("make the run of schedule %s for %s: %w", id, task.Stamp(rec.Firing), err)
		}
		runID = run.ID
	}
	t, err = dir.Update(ctx, id, func(t *taskfile.Task) error {
		r := Of(t)
		if !r.Firing.Equal(rec.Firing) {
			return ErrNothing // changed by another writer meanwhile
		}
		r.Last, r.LastRun, r.Firing = r.Firing, runID, time.Time{}
		r.Runs++
		if s, err := calendar.ParseSchedule(r.For); err == nil {
			r.Next = after(s, r.Last, now)
		}
		set(t, r)
		return nil
	})
	if err != nil {
		return nil, runID, fmt.Errorf("record run %s of schedule %s: %w", runID, id, err)
	}
	return t, runID, nil
}

// errUnchanged leaves the file as it is.
var errUnchanged = errors.New("unchanged")

// after is the schedule's next time after last that is after now: the
// times between are missed (they are counted when the run is made).
func after(s *calendar.Schedule, last, now time.Time) time.Time {
	next := s.Next(last)
	if !next.IsZero() && !next.After(now) {
		next = s.Next(now)
	}
	return next
}

// RunName is the name of a schedule's run for time at.
func RunName(at time.Time) string {
	return "run-" + at.UTC().Format("20060102T150405Z")
}

// makeRun creates the run of schedule t for time at: a child of it that
// its parent does not wait for, with its prompt, its subject, and the
// settings a run takes from its schedule.
func makeRun(ctx context.Context, cfg *config.Config, dir *taskfile.Dir, t *taskfile.Task, at time.Time) (*taskfile.Task, error) {
	m := t.Metadata.Object("taskd")
	prompt, _ := m.String("prompt")
	if prompt == "" {
		prompt = t.Description
	}
	inherit := map[string]any{}
	for _, k := range Inherited {
		if v, ok := m.Get(k); ok && v != nil {
			inherit[k] = v
		}
	}
	return children.Push(ctx, cfg, dir, t.ID, children.PushOptions{
		Name: RunName(at), Prompt: prompt, Subject: t.Subject, Start: true, Detached: true,
		Inherit: inherit, Extra: map[string]any{"scheduledFor": task.Stamp(at)},
	})
}

// madeFor returns the id of the run of schedule id made for time at, if
// its file is there: the search after a crash between the run's creation
// and its record.
func madeFor(dir *taskfile.Dir, id string, at time.Time) string {
	ids, err := dir.List()
	if err != nil {
		return ""
	}
	for _, rid := range ids {
		r, err := dir.Read(rid)
		if err != nil {
			continue
		}
		m := r.Metadata.Object("taskd")
		p, _ := m.String("parent")
		s, _ := m.String("scheduledFor")
		if at2, err := time.Parse(time.RFC3339Nano, s); p == id && err == nil && at2.Equal(at) {
			return rid
		}
	}
	return ""
}
