package subagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// A handoff links a parent to one of its children (metadata.taskd.handoffs
// of the parent). In monitor mode the parent goes on; the daemon mirrors
// the child's events into the parent's stream and logs HandoffComplete and
// HandoffResolved when the child ends. With transfer-control the parent
// waits for the child (a prompt line suspends the task, taskd handoff
// blocks) and then applies --on-failure: retry runs the child again (at
// most maxHandoffRetries times, then it escalates), abort fails the parent,
// escalate makes it needs_human.

// maxHandoffRetries bounds --on-failure retry.
const maxHandoffRetries = 2

// States of a handoff record.
const (
	handoffActive    = "active"    // waiting for the child, or monitoring it
	handoffEscalated = "escalated" // a person decides
	handoffResolved  = "resolved"  // over: outcome and action are final
)

// Handoff modes.
const (
	modeMonitor  = "monitor"
	modeTransfer = "transfer-control"
)

// handoffRecord is one entry of metadata.taskd.handoffs.
type handoffRecord struct {
	Child        string `json:"child"`
	Name         string `json:"name,omitempty"`
	AgentType    string `json:"agentType,omitempty"`
	Line         int    `json:"line"` // the prompt line; 0 for taskd handoff
	Mode         string `json:"mode"`
	OnFailure    string `json:"onFailure"`
	Timeout      string `json:"timeout"`
	State        string `json:"state"`
	InitiatedAt  string `json:"initiatedAt"`
	TryStartedAt string `json:"tryStartedAt"` // the timeout counts from here
	Retries      int    `json:"retries,omitempty"`
	TimedOut     bool   `json:"timedOut,omitempty"`
	// Completed is the child's attempt whose end was reported
	// (HandoffComplete), so that it is reported once.
	Completed  *int   `json:"completed,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	Action     string `json:"action,omitempty"`
	Accepted   bool   `json:"accepted,omitempty"` // a person accepted a failed child
	ResolvedAt string `json:"resolvedAt,omitempty"`
}

func (r *handoffRecord) deadline() time.Time {
	start, _ := time.Parse(time.RFC3339Nano, r.TryStartedAt)
	d, _ := time.ParseDuration(r.Timeout)
	return start.Add(d)
}

func handoffsOf(t *taskfile.Task) []handoffRecord {
	return decodeList[handoffRecord](task.FieldOf(t, func(r *task.Record) *[]any { return &r.Handoffs }))
}

// handoffs runs handoffs for one parent; it serves the daemon's prompt
// lines and taskd handoff alike.
type handoffs struct {
	cfg    *config.Config
	dir    *taskfile.Dir
	parent string
	emit   func(eventlog.Event)
}

// ensure finds the record of a handoff to child from line (from taskd
// handoff, line 0: the latest one that is not resolved), or creates it and
// logs HandoffInitiated.
func (h *handoffs) ensure(ctx context.Context, child *taskfile.Task, req *prompt.Handoff, line int) (handoffRecord, error) {
	mode := modeMonitor
	if req.TransferControl {
		mode = modeTransfer
	}
	var rec handoffRecord
	created := false
	_, err := h.dir.Update(ctx, h.parent, func(t *taskfile.Task) error {
		recs := handoffsOf(t)
		for _, r := range recs {
			if r.Child == child.ID && r.Line == line && (line > 0 || r.State != handoffResolved && r.Mode == mode) {
				rec, created = r, false
				return nil
			}
		}
		now := task.Stamp(time.Now())
		cm := child.Metadata.Object("taskd")
		rec = handoffRecord{Child: child.ID, Line: line, Mode: mode, OnFailure: req.OnFailure,
			Timeout: req.Timeout.String(), State: handoffActive, InitiatedAt: now, TryStartedAt: now}
		rec.Name, _ = cm.String("name")
		rec.AgentType, _ = cm.String("agentType")
		created = true
		task.Change(t, func(r *task.Record) { r.Handoffs = listOf(append(recs, rec)) })
		return nil
	})
	if err != nil || !created {
		return rec, err
	}
	f := subagentFields(h.dir.Path(), child)
	f["handoff_mode"] = mode
	f["on_failure"] = rec.OnFailure
	f["timeout"] = rec.Timeout
	if line > 0 {
		f["line"] = line
	}
	h.emit(eventlog.Event{Type: eventlog.HandoffInitiated, Task: h.parent, Data: f})
	return rec, nil
}

// update applies fn to the record of child from line (for taskd handoff,
// line 0, the latest one not resolved, else the latest) and returns it as
// written.
func (h *handoffs) update(ctx context.Context, child string, line int, fn func(*handoffRecord)) (handoffRecord, error) {
	var out handoffRecord
	_, err := h.dir.Update(ctx, h.parent, func(t *taskfile.Task) error {
		recs := handoffsOf(t)
		found := -1
		for i := len(recs) - 1; i >= 0; i-- {
			if r := &recs[i]; r.Child == child && r.Line == line {
				if found < 0 || recs[found].State == handoffResolved && r.State != handoffResolved {
					found = i
				}
			}
		}
		if found < 0 {
			return fmt.Errorf("task %s has no handoff to %s", h.parent, child)
		}
		fn(&recs[found])
		out = recs[found]
		task.Change(t, func(r *task.Record) { r.Handoffs = listOf(recs) })
		return nil
	})
	return out, err
}

// waitChild waits until child has ended and its result is delivered, or
// until the handoff's deadline; then, if it has not ended, it times the
// handoff out: the child is cancelled (SubagentTimeout) and waited for. It
// returns the child as it ended.
func (h *handoffs) waitChild(ctx context.Context, rec *handoffRecord) (*taskfile.Task, error) {
	wctx, cancel := context.WithDeadline(ctx, rec.deadline())
	tasks, err := waitTasks(wctx, h.dir, []string{rec.Child}, func(ts map[string]*taskfile.Task) bool {
		return ts[rec.Child] == nil || childDone(ts[rec.Child])
	})
	cancel()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	c := tasks[rec.Child]
	if c == nil {
		return nil, fmt.Errorf("task %s is gone", rec.Child)
	}
	if childDone(c) {
		return c, nil
	}
	return h.timeOut(ctx, rec, c)
}

// timeOut ends a handoff whose deadline passed: the child is cancelled,
// SubagentTimeout is logged, and the child is waited for until it has
// ended (at most twice the grace period and a margin).
func (h *handoffs) timeOut(ctx context.Context, rec *handoffRecord, c *taskfile.Task) (*taskfile.Task, error) {
	r, err := h.update(ctx, rec.Child, rec.Line, func(r *handoffRecord) { r.TimedOut = true })
	if err != nil {
		return nil, err
	}
	*rec = r
	f := subagentFields(h.dir.Path(), c)
	f["source"] = "handoff"
	f["timeout"] = rec.Timeout
	f["handoff_mode"] = rec.Mode
	h.emit(eventlog.Event{Type: eventlog.SubagentTimeout, Task: rec.Child, Parent: h.parent, Data: f})
	if _, err := control.CancelTask(ctx, h.dir, rec.Child); err != nil && !strings.Contains(err.Error(), "already ended") {
		return nil, fmt.Errorf("cancel %s after the handoff's timeout: %w", rec.Child, err)
	}
	wctx, cancel := stopWait(ctx, h.cfg)
	defer cancel()
	tasks, err := waitTasks(wctx, h.dir, []string{rec.Child}, func(ts map[string]*taskfile.Task) bool {
		return ts[rec.Child] == nil || childDone(ts[rec.Child])
	})
	if err != nil {
		return nil, fmt.Errorf("wait for %s to stop after its handoff timed out: %w", rec.Child, err)
	}
	if tasks[rec.Child] == nil {
		return nil, fmt.Errorf("task %s is gone", rec.Child)
	}
	return tasks[rec.Child], nil
}

// Actions after a transfer-control handoff's child ended.
const (
	actNone     = "none"
	actRetry    = "retry"
	actAbort    = "abort"
	actEscalate = "escalate"
	actContinue = "continue" // a person accepted the failure
)

// settle decides a transfer-control handoff whose child c has ended, records
// the outcome and returns the action: none (success, or a failure a person
// accepted), retry (c runs again), abort or escalate. HandoffResolved is
// logged for every action but retry.
func (h *handoffs) settle(ctx context.Context, rec *handoffRecord, c *taskfile.Task) (string, error) {
	if err := h.completed(ctx, rec, c); err != nil {
		return "", err
	}
	state := task.Of(c)
	outcome := outcomeOfState(state)
	if rec.TimedOut && state == task.Cancelled {
		outcome = "timeout"
	}
	action := rec.OnFailure
	switch {
	case outcome == "success":
		action = actNone
	case rec.Accepted:
		action = actContinue
	case action == actRetry && rec.Retries >= maxHandoffRetries:
		action = actEscalate // retries exhausted: a person decides
	}
	if action == actRetry {
		if _, err := restartChild(ctx, h.dir, c.ID, ""); err != nil {
			return "", err
		}
		r, err := h.update(ctx, rec.Child, rec.Line, func(r *handoffRecord) {
			r.Retries++
			r.TryStartedAt, r.TimedOut, r.Outcome = task.Stamp(time.Now()), false, outcome
		})
		if err != nil {
			return "", err
		}
		*rec = r
		f := subagentFields(h.dir.Path(), c)
		f["event_type"] = trSubagentRetry
		f["retry"] = r.Retries
		f["max_retries"] = maxHandoffRetries
		h.emit(eventlog.Event{Type: eventlog.TranscriptEvent, Task: c.ID, Parent: h.parent, Data: f})
		return actRetry, nil
	}
	r, err := h.update(ctx, rec.Child, rec.Line, func(r *handoffRecord) {
		r.Outcome, r.Action = outcome, action
		r.State = handoffResolved
		if action == actEscalate {
			r.State = handoffEscalated
		}
		r.ResolvedAt = task.Stamp(time.Now())
	})
	if err != nil {
		return "", err
	}
	*rec = r
	h.resolved(rec, c)
	return action, nil
}

// completed logs HandoffComplete for an end of c that the delivery of its
// result did not report (the handoff was recorded after it).
func (h *handoffs) completed(ctx context.Context, rec *handoffRecord, c *taskfile.Task) error {
	n := task.RecordOf(c).Attempt
	report := false
	r, err := h.update(ctx, rec.Child, rec.Line, func(r *handoffRecord) {
		// Decided on the record as stored: the delivery may just have
		// reported it.
		a := int(n)
		report = r.Completed == nil || *r.Completed != a
		r.Completed = &a
	})
	if err != nil {
		return err
	}
	*rec = r
	if !report {
		return nil
	}
	h.emit(eventlog.Event{Type: eventlog.HandoffComplete, Task: h.parent, Data: completeFields(subagentFields(h.dir.Path(), c), rec, int(n))})
	return nil
}

// completeFields are HandoffComplete's data: the child's fields and the
// handoff's.
func completeFields(f map[string]any, r *handoffRecord, attempt int) map[string]any {
	f["handoff_mode"] = r.Mode
	if r.TimedOut && f["outcome"] == "cancelled" {
		f["outcome"] = "timeout"
	}
	f["artifacts"] = f["artifact_paths"]
	f["subagent_attempt"] = attempt
	if r.Line > 0 {
		f["line"] = r.Line
	}
	return f
}

// monitorEnded ends a monitor-mode handoff to a child that had already
// ended when the handoff was recorded (its delivery saw no handoff).
func (h *handoffs) monitorEnded(ctx context.Context, rec *handoffRecord, c *taskfile.Task) error {
	if rec.Mode != modeMonitor || rec.State != handoffActive || !childDone(c) {
		return nil
	}
	if err := h.completed(ctx, rec, c); err != nil {
		return err
	}
	state := task.Of(c)
	resolve := false
	r, err := h.update(ctx, rec.Child, rec.Line, func(r *handoffRecord) {
		if resolve = r.State == handoffActive; resolve {
			r.State, r.Outcome, r.Action, r.ResolvedAt = handoffResolved, outcomeOfState(state), actNone, task.Stamp(time.Now())
		}
	})
	if err != nil || !resolve {
		return err
	}
	*rec = r
	h.resolved(rec, c)
	return nil
}

// resolved logs HandoffResolved for rec.
func (h *handoffs) resolved(rec *handoffRecord, c *taskfile.Task) {
	f := subagentFields(h.dir.Path(), c)
	f["handoff_mode"] = rec.Mode
	f["outcome"] = rec.Outcome
	f["action"] = rec.Action
	f["retries"] = rec.Retries
	f["artifacts"] = f["artifact_paths"]
	h.emit(eventlog.Event{Type: eventlog.HandoffResolved, Task: h.parent, Data: f})
}

// handoffChild resolves a /handoff or taskd handoff id (an id or a name
// of a child of parent) to the child, which must have been started.
func handoffChild(dir *taskfile.Dir, parent, ref string) (*taskfile.Task, error) {
	id, err := children.Named(dir, parent, ref)
	if err != nil {
		return nil, err
	}
	c, err := dir.Read(id)
	if err != nil {
		return nil, err
	}
	if s := task.Of(c); s == task.Queued {
		return nil, fmt.Errorf("task %s is queued; start it (/run, taskd child start) before handing off to it", id)
	}
	return c, nil
}
