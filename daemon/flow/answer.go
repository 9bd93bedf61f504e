package flow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
)

// Continue is the answer that takes a workflow on past a stage boundary.
const Continue = "continue"

// errRefused stops the claim of an answer the task does not offer.
var errRefused = errors.New("answer refused")

// Answer goes on with a workflow task a person answered
// (metadata.taskd.resolve, with an optional metadata.taskd.resolveNote):
// at a human step, passed or failed advance the workflow and leave keeps it
// waiting; at the loop guard, continue allows another round of steps, abort
// and investigate stop the workflow; at a stage boundary (a task completed
// at a success end that leads on), continue walks on through the end's
// passed edge. An answer that is not among the options the task offers
// (metadata.taskd.hitl.options) is refused: the task keeps waiting, and
// hitl.refused says why. A note goes into the prompt of the step that runs
// next and into the step trace.
func Answer(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	var answer, kind, refusal string
	c, err := j.Claim(ctx, func(t *taskfile.Task, sp *task.Spec) error {
		answer = sp.Resolve
		rec := task.RecordOf(t)
		if sp.State == task.Succeeded && answer == Continue && rec.Boundary != nil {
			kind = "boundary"
			_, err := task.Move(t, task.Restart) // a person runs it again, from where it stopped
			return err
		}
		if sp.State != task.NeedsHuman || answer == "" {
			return job.ErrNotRunnable
		}
		kind, _ = rec.Hold.String("kind")
		if opts := task.Strings(rec.Hold, "options"); len(opts) > 0 && !slices.Contains(opts, answer) {
			refusal = fmt.Sprintf("%q is not an answer here; answer %s", answer, orList(opts))
			return errRefused
		}
		if answer == "leave" {
			return job.ErrNotRunnable
		}
		return nil
	})
	switch {
	case errors.Is(err, errRefused):
		return refuse(ctx, j, answer, refusal)
	case err == job.ErrNotRunnable && answer == "leave":
		return j.KeepWaiting(ctx)
	case err != nil:
		return nil, err
	}
	t, sp := c.Task, c.Spec
	_, noted := t.Metadata.Object("taskd").String("resolveNote")
	l.Events.Append(eventlog.Event{Type: eventlog.HumanResolved, List: l.ID, Task: id, Parent: sp.Parent, Step: currentStep(t),
		Data: map[string]any{"answer": answer, "kind": kind, "note": noted}})
	switch {
	case kind == "boundary":
		return newFlow(j, t, sp).loop(ctx, "passed", afterAnswer)
	case kind == "guard":
		t, err = l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
			m := task.Meta(t)
			entry := personEntry(currentStep(t), "", answer, takeNote(m))
			m.Delete("resolve")
			rec := task.RecordOf(t)
			appendTrace(&rec, entry)
			rec.Hold = nil
			if answer == actionContinue {
				rec.GuardAt = rec.Iteration + softGuard
				task.Store(t, rec)
				return nil
			}
			rec.Error = fmt.Sprintf("stopped at the loop guard (%s); the steps so far are in metadata.taskd.stepTrace; run it again with taskd retry, or from its first step with taskd restart", answer)
			_, err := task.Apply(t, task.Stop, rec)
			return err
		})
		if err != nil || answer != actionContinue {
			return t, err
		}
		return newFlow(j, t, sp).loop(ctx, "", afterNothing)
	case answer == "passed" || answer == "failed":
		return newFlow(j, t, sp).loop(ctx, answer, afterAnswer)
	}
	return nil, fmt.Errorf("task %s: answer %q is not one of passed, failed or leave", id, answer)
}

// refuse records an answer the task does not offer: the answer is
// removed, the task keeps waiting, and metadata.taskd.hitl.refused says
// what was refused and which answers are offered. The note, if any, is
// kept for the next answer.
func refuse(ctx context.Context, j *job.Job, answer, why string) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	t, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		m := task.Meta(t)
		if r, _ := m.String("resolve"); r != answer || task.Of(t) != task.NeedsHuman {
			return job.ErrNotRunnable // answered again meanwhile
		}
		m.Delete("resolve")
		task.Change(t, func(r *task.Record) {
			if r.Hold == nil {
				r.Hold = taskfile.NewObject()
			}
			r.Hold.Set("refused", why)
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.Events.Append(eventlog.Event{Type: eventlog.HumanResolved, List: l.ID, Task: id, Step: currentStep(t),
		Data: map[string]any{"answer": answer, "refused": why}})
	return t, nil
}

// answers returns what a person may answer at step of the workflow: passed
// and failed where an edge leaves step for that result (an edge without
// "on" serves both), then leave, which keeps the task waiting.
func answers(wf *navigator.Workflow, step string) []string {
	var out []string
	for _, r := range []string{"passed", "failed"} {
		if wf != nil && hasWayOn(wf, step, r) {
			out = append(out, r)
		}
	}
	return append(out, "leave")
}

func hasWayOn(wf *navigator.Workflow, step, result string) bool {
	for _, e := range wf.Outgoing(step) {
		if e.On == "" || e.On == result {
			return true
		}
	}
	return false
}

// stageNext returns the step a workflow continues to from end, a success
// end: the target of its first "on": "passed" edge, if that is neither a
// start nor an end node (the navigator's rule for autonomy); "" when end
// is no stage boundary.
func stageNext(wf *navigator.Workflow, end string) string {
	if wf == nil {
		return ""
	}
	for _, e := range wf.Outgoing(end) {
		if e.On == "passed" {
			if n := wf.Node(e.To); n != nil && !n.IsTerminal() {
				return e.To
			}
			return ""
		}
	}
	return ""
}

// askFor words the answers of a human step for its reason.
func askFor(options []string) string {
	var moving []string
	for _, o := range options {
		if o != "leave" {
			moving = append(moving, o)
		}
	}
	if len(moving) == 0 {
		return "the workflow has no way on from this step: restart the task from its first step (taskd restart), or cancel it"
	}
	return "answer " + orList(moving) + " to go on (taskd resolve, with --note for directions to the next step), or leave it waiting"
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
