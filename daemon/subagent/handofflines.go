package subagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// ErrHandoffFailed is returned (wrapped) by Handoff when the child failed
// and --on-failure was abort or escalate (or retries ran out).
var ErrHandoffFailed = errors.New("handoff failed")

// HandoffResult is what taskd handoff reports.
type HandoffResult struct {
	Child   string            `json:"child"`
	Mode    string            `json:"mode"`
	Outcome string            `json:"outcome,omitempty"` // success, failure, timeout, cancelled
	Action  string            `json:"action,omitempty"`  // none, abort, escalate
	Retries int               `json:"retries"`
	Result  *children.Message `json:"result,omitempty"` // the child's result (transfer-control)
}

// Handoff hands off from task parentID in dir to its child ref (an id or a
// name), as taskd handoff does while parentID's agent runs. runDir is the
// parent's current run folder.
//
// In monitor mode it records the link (HandoffInitiated) and returns at
// once; the daemon mirrors the child's events into the parent's stream.
// With transfer-control it blocks until the child has ended (waking on file
// events) or the timeout passes (the child is then cancelled:
// SubagentTimeout), and applies --on-failure: retry runs the child again
// and waits again (at most twice; then it escalates); abort and escalate
// return an error wrapping ErrHandoffFailed and leave a verdict in runDir
// that the daemon applies when the parent's agent exits: abort fails the
// parent, escalate makes it needs_human. ctx ending stops the wait.
func (pt Parent) Handoff(ctx context.Context, runDir string, req *prompt.Handoff) (*HandoffResult, error) {
	cfg, dir, parentID := pt.Config, pt.Dir, pt.ID
	h := &handoffs{cfg: cfg, dir: dir, parent: parentID, emit: func(ev eventlog.Event) { AppendEvent(dir.Path(), ev) }}
	c, err := handoffChild(dir, parentID, req.ID)
	if err != nil {
		return nil, err
	}
	rec, err := h.ensure(ctx, c, req, 0)
	if err != nil {
		return nil, err
	}
	out := &HandoffResult{Child: c.ID, Mode: rec.Mode}
	if !req.TransferControl {
		return out, h.monitorEnded(ctx, &rec, c)
	}
	for {
		c, err = h.waitChild(ctx, &rec)
		if err != nil {
			return nil, err
		}
		action, err := h.settle(ctx, &rec, c)
		if err != nil {
			return nil, err
		}
		if action == actRetry {
			continue
		}
		msg := children.ResultMessage(dir, c)
		out.Outcome, out.Action, out.Retries, out.Result = rec.Outcome, rec.Action, rec.Retries, &msg
		if action == actNone || action == actContinue {
			return out, nil
		}
		reason := fmt.Sprintf("the handoff to %s (task %s) ended with %s after %d retries; --on-failure %s",
			cmp.Or(rec.Name, c.ID), c.ID, rec.Outcome, rec.Retries, rec.OnFailure)
		v := verdict{Action: verdictFail, Kind: "handoff", Reason: reason, Child: c.ID}
		if action == actEscalate {
			v.Action, v.Options = verdictNeedsHuman, handoffOptions
		}
		if err := writeVerdict(runDir, v); err != nil {
			return out, err
		}
		return out, fmt.Errorf("%w: %s", ErrHandoffFailed, reason)
	}
}

// handoffOptions are the answers to an escalated handoff.
var handoffOptions = []string{actRetry, actContinue, actAbort, "leave"}

// HandoffLine runs a /handoff prompt line of task t. Monitor mode records
// the link and goes on. Transfer-control suspends t until the child has
// ended (or the handoff's deadline, when the child is cancelled), then
// applies --on-failure: the child's result goes into the prompt on success
// (or when a person accepted its failure), retry runs the child again and
// suspends t again, abort fails t (the error), escalate makes t
// needs_human with the options retry, continue, abort and leave.
func (ld Leading) HandoffLine(ctx context.Context, line int, c *prompt.Handoff) error {
	j, t, sp, results := ld.Job, ld.Task, ld.Spec, ld.Results
	l := j.List
	h := &handoffs{cfg: j.Config, dir: l.Dir, parent: t.ID, emit: l.Emit}
	child, err := handoffChild(l.Dir, t.ID, c.ID)
	if err != nil {
		return err
	}
	rec, err := h.ensure(ctx, child, c, line)
	if err != nil {
		return err
	}
	if !c.TransferControl {
		return h.monitorEnded(ctx, &rec, child)
	}
	action := rec.Action
	switch rec.State {
	case handoffActive:
		if !childDone(child) {
			if time.Now().Before(rec.deadline()) {
				return suspend(ctx, j, t, sp, Wait{Kind: "handoff", Line: line, Children: []string{child.ID}, Deadline: task.Stamp(rec.deadline())})
			}
			if child, err = h.timeOut(ctx, &rec, child); err != nil {
				return err
			}
		}
		if action, err = h.settle(ctx, &rec, child); err != nil {
			return err
		}
	case handoffEscalated:
		action = actEscalate // still for a person to answer
	}
	switch action {
	case actRetry:
		return suspend(ctx, j, t, sp, Wait{Kind: "handoff", Line: line, Children: []string{child.ID}, Deadline: task.Stamp(rec.deadline())})
	case actAbort:
		return fmt.Errorf("the handoff to %s (task %s) ended with %s; --on-failure abort", cmp.Or(rec.Name, child.ID), child.ID, rec.Outcome)
	case actEscalate:
		reason := fmt.Sprintf("the subagent %s (task %s) you hand off to at line %d ended with %s after %d retries (--on-failure %s): retry it, continue without it, or abort",
			cmp.Or(rec.Name, child.ID), child.ID, line, rec.Outcome, rec.Retries, rec.OnFailure)
		return askPerson(ctx, j, t, sp, hitlRecord{Kind: "handoff", Source: "line", Line: line, Child: child.ID,
			Reason: reason, Options: handoffOptions})
	}
	*results = append(*results, handoffReport(l, child, &rec))
	return moveToDone(ctx, l.Dir, t.ID, []string{child.ID})
}

// handoffReport renders an ended child's result for its parent.
func handoffReport(l *job.List, c *taskfile.Task, rec *handoffRecord) string {
	msg := children.ResultMessage(l.Dir, c)
	name := msg.Name
	if name == "" {
		name = "#" + c.ID
	}
	verdict := "succeeded"
	if !*msg.Success {
		verdict = "failed (" + rec.Outcome + "; accepted by a person)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Result of the subagent you handed off to: %s (task %s), %s\n\n", name, c.ID, verdict)
	children.WriteResult(&b, msg)
	return b.String()
}

// moveToDone moves ids to parent's done collection: their results have
// been given to it.
func moveToDone(ctx context.Context, dir *taskfile.Dir, parent string, ids []string) error {
	_, err := dir.Update(ctx, parent, func(t *taskfile.Task) error {
		ch := task.RecordOf(t).Children
		for _, id := range ids {
			for _, coll := range []string{children.Parallel, children.Sequential} {
				if slices.Contains(task.Strings(ch, coll), id) {
					children.MoveChild(t, coll, children.Done, id)
				}
			}
		}
		return nil
	})
	return err
}
