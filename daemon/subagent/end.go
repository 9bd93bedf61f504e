package subagent

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Ended reports the end of an attempt of child c, once, when its
// result is delivered to its parent (before delivered is set, so a crash in
// between reports it again rather than never):
//
//   - for a subagent (agentType set), a TranscriptEvent subagent_stop with
//     the outcome, plus SubagentError (a failure, with the end of its
//     stderr) or SubagentTimeout (its own timeout), unless
//     metadata.taskd.endLogged says this attempt was reported;
//   - for every unresolved handoff of the parent to c, HandoffComplete; a
//     monitor-mode handoff is then over (HandoffResolved, action none).
//
// Failures are logged and do not stop the delivery. (The child's file is
// not written here: a write while a cancelled child's result is delivered
// would stop the delivery job. deliverResult records endLogged with
// delivered, through markEndReported.)
func Ended(ctx context.Context, j *job.Job, c *taskfile.Task) {
	l := j.List
	m := c.Metadata.Object("taskd")
	rec := task.RecordOf(c)
	parentID, _ := m.String("parent")
	state, attempt := rec.State, rec.Attempt
	fields := subagentFields(l.Dir.Path(), c)
	if state == task.Cancelled && timedOutByHandoff(l.Dir, parentID, c.ID) {
		fields["outcome"] = "timeout" // cancelled because its handoff's time ran out
	}
	e := childEnd{j: j, c: c, parent: parentID, state: state, attempt: attempt, fields: fields}
	if _, isSub := m.String("agentType"); isSub {
		if rec.EndLogged == nil || *rec.EndLogged != attempt {
			e.report()
		}
	}
	if err := e.completeHandoffs(ctx); err != nil {
		j.Log.Warn("record the end of a handoff", "list", l.ID, "task", parentID, "child", c.ID, "err", err)
	}
}

// timedOutByHandoff reports whether a handoff of parent to child that is
// not resolved timed out: the child was cancelled for that.
func timedOutByHandoff(dir *taskfile.Dir, parent, child string) bool {
	p, err := dir.Read(parent)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(handoffsOf(p), func(r handoffRecord) bool {
		return r.Child == child && r.TimedOut && r.State != handoffResolved
	})
}

// A childEnd is the end of an attempt of child c of task parent, in job
// j: the state it ended in, and the fields of its subagent_stop event.
type childEnd struct {
	j       *job.Job
	c       *taskfile.Task
	parent  string
	state   task.State
	attempt int
	fields  map[string]any
}

// report logs the end of a subagent's attempt.
func (e childEnd) report() {
	j, c, parentID, state, attempt, fields := e.j, e.c, e.parent, e.state, e.attempt, e.fields
	l := j.List
	stop := maps.Clone(fields)
	stop["event_type"] = trSubagentStop
	l.Emit(eventlog.Event{Type: eventlog.TranscriptEvent, Task: c.ID, Parent: parentID, Attempt: attempt, Data: stop})
	switch state {
	case task.Failed, task.Stopped:
		f := maps.Clone(fields)
		msg := task.RecordOf(c).Error
		f["error"] = msg
		f["error_kind"] = "failure"
		if strings.HasPrefix(msg, ErrScope.Error()+":") {
			f["error_kind"] = "permission" // refused before its attempt started
		}
		if attempt > 0 {
			tail, _ := agent.ReadTail(l.Dir.Path(), filepath.Join(l.RunDir(c.ID, attempt), "stderr.log"), 2<<10)
			f["stderr"] = string(tail)
		}
		l.Emit(eventlog.Event{Type: eventlog.SubagentError, Task: c.ID, Parent: parentID, Attempt: attempt, Data: f})
	case task.TimedOut:
		f := maps.Clone(fields)
		f["source"] = "subagent"
		if v, ok := c.Metadata.Object("taskd").Get("timeout"); ok {
			if d, err := task.ParseTimeout(v); err == nil {
				f["timeout"] = d.String()
			}
		}
		l.Emit(eventlog.Event{Type: eventlog.SubagentTimeout, Task: c.ID, Parent: parentID, Attempt: attempt, Data: f})
	}
}

// completeHandoffs logs HandoffComplete for the parent's unresolved
// handoffs to c whose end has not been reported for this attempt, and
// resolves the monitor-mode ones.
func (e childEnd) completeHandoffs(ctx context.Context) error {
	j, c, parentID, state, attempt, fields := e.j, e.c, e.parent, e.state, e.attempt, e.fields
	l := j.List
	parent, err := l.Dir.Read(parentID)
	if err != nil || len(handoffsOf(parent)) == 0 {
		return nil
	}
	var done []handoffRecord
	_, err = l.Dir.Update(ctx, parentID, func(t *taskfile.Task) error {
		done = nil
		recs := handoffsOf(t)
		for i := range recs {
			r := &recs[i]
			if r.Child != c.ID || r.State == handoffResolved || r.Completed != nil && *r.Completed == attempt {
				continue
			}
			n := attempt
			r.Completed = &n
			r.Outcome = outcomeOfState(state)
			if r.TimedOut && state == task.Cancelled {
				r.Outcome = "timeout"
			}
			if r.Mode == modeMonitor {
				r.State, r.Action, r.ResolvedAt = handoffResolved, actNone, task.Stamp(time.Now())
			}
			done = append(done, *r)
		}
		if len(done) == 0 {
			return job.ErrNotRunnable // nothing to write
		}
		task.Change(t, func(r *task.Record) { r.Handoffs = listOf(recs) })
		return nil
	})
	if err == job.ErrNotRunnable {
		return nil
	}
	if err != nil {
		return err
	}
	h := &handoffs{cfg: j.Config, dir: l.Dir, parent: parentID, emit: l.Emit}
	for i := range done {
		r := &done[i]
		l.Emit(eventlog.Event{Type: eventlog.HandoffComplete, Task: parentID, Data: completeFields(maps.Clone(fields), r, attempt)})
		if r.Mode == modeMonitor {
			h.resolved(r, c)
		}
	}
	return nil
}

// MarkEndReported records, with delivered, that the end of a subagent's
// current attempt has been reported.
func MarkEndReported(t *taskfile.Task) {
	if _, ok := task.Meta(t).String("agentType"); ok {
		task.Change(t, func(r *task.Record) { r.EndLogged = &r.Attempt })
	}
}
