package subagent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// A person answers a handoff or converge question (metadata.taskd.hitl
// with kind handoff or converge) by setting metadata.taskd.resolve to one
// of hitl.options:
//
//	handoff   retry     run the child again; the parent waits for it again
//	          continue  go on without it: before the agent (source line),
//	                    the failed result goes into the prompt; after it
//	                    (source command), the attempt counts as the agent
//	                    reported it
//	converge  <task id> that child wins the conflicts it takes part in; the
//	                    convergence runs again (more conflicts: asks again)
//	both      abort     the parent fails
//	          leave     the question stays open
//
// Every answer but abort and leave makes the parent pending: it runs again
// from its first prompt line (source line), or its agent runs again
// (source command; its taskd converge then finds the answer).

// Answer handles the answer to a handoff or converge question of
// task id; ok is false for any other task, which resolveTask handles.
func Answer(ctx context.Context, j *job.Job) (t *taskfile.Task, err error, ok bool) {
	l, id := j.List, j.ID
	t, err = l.Dir.Read(id)
	if err != nil {
		return nil, nil, false
	}
	sp, err := task.ReadSpec(t)
	h, found := hitlOf(t)
	if err != nil || !found || sp.State != task.NeedsHuman || sp.Resolve == "" {
		return nil, nil, false
	}
	answer := sp.Resolve
	if answer == "leave" {
		t, err = j.KeepWaiting(ctx)
		return t, err, true
	}
	if !slices.Contains(h.Options, answer) {
		return refuseAnswer(ctx, j, answer, h), nil, true
	}
	l.Emit(eventlog.Event{Type: eventlog.HumanResolved, Task: id, Parent: sp.Parent, Data: map[string]any{"answer": answer, "kind": h.Kind}})
	switch {
	case answer == actAbort:
		t, err = abortByPerson(ctx, j, sp, h)
	case h.Kind == "handoff":
		t, err = answerHandoff(ctx, j, sp, h, answer)
	default:
		t, err = answerConverge(ctx, j, h, answer)
	}
	return t, err, true
}

// hitlOf reads the handoff or converge question of t.
func hitlOf(t *taskfile.Task) (hitlRecord, bool) {
	h, ok := decodeValue[hitlRecord](task.RecordOf(t).Hold)
	return h, ok && (h.Kind == "handoff" || h.Kind == "converge")
}

// refuseAnswer consumes an answer that is not an option and says so in the
// question (hitl.refused); the task keeps waiting.
func refuseAnswer(ctx context.Context, j *job.Job, answer string, h hitlRecord) *taskfile.Task {
	l, id := j.List, j.ID
	h.Refused = fmt.Sprintf("%q is not an answer here; answer one of: %s", answer, strings.Join(h.Options, ", "))
	t, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		task.Meta(t).Delete("resolve")
		task.Change(t, func(r *task.Record) { r.Hold = objectOf(h) })
		return nil
	})
	j.Log.Warn("answer is not an option", "list", l.ID, "task", id, "answer", answer, "options", h.Options, "err", err)
	return t
}

// abortByPerson fails a task whose question a person answered with abort;
// an escalated handoff is resolved so (HandoffResolved, action abort).
func abortByPerson(ctx context.Context, j *job.Job, sp task.Spec, h hitlRecord) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	if h.Kind == "handoff" {
		hs := &handoffs{cfg: j.Config, dir: l.Dir, parent: id, emit: l.Emit}
		rec, err := hs.update(ctx, h.Child, h.Line, func(r *handoffRecord) {
			r.State, r.Action, r.ResolvedAt = handoffResolved, actAbort, task.Stamp(time.Now())
		})
		if err != nil {
			return nil, err
		}
		if child, err := l.Dir.Read(h.Child); err == nil {
			hs.resolved(&rec, child)
		}
	}
	msg := fmt.Sprintf("aborted by a person: %s", h.Reason)
	t, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		rec.Error, rec.FinishedAt = msg, time.Now()
		rec.Hold = nil
		if _, err := task.Apply(t, task.Fail, rec); err != nil {
			return err
		}
		task.Meta(t).Delete("resolve")
		return nil
	})
	if err == nil {
		l.Emit(eventlog.Event{Type: eventlog.TaskFailed, Task: id, Parent: sp.Parent, Attempt: sp.Attempt, Data: map[string]any{"error": msg}})
	}
	return t, err
}

// answerHandoff applies retry or continue to an escalated handoff.
func answerHandoff(ctx context.Context, j *job.Job, sp task.Spec, h hitlRecord, answer string) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	hs := &handoffs{cfg: j.Config, dir: l.Dir, parent: id, emit: l.Emit}
	child, err := l.Dir.Read(h.Child)
	if err != nil {
		return nil, err
	}
	switch answer {
	case actRetry:
		// A note given with the answer is for the child that runs again.
		note := ""
		if t, err := l.Dir.Read(id); err == nil {
			note, _ = t.Metadata.Object("taskd").String("resolveNote")
		}
		if childDone(child) {
			if _, err := restartChild(ctx, l.Dir, h.Child, note); err != nil {
				return nil, err
			}
		}
		if note != "" {
			if _, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
				task.Meta(t).Delete("resolveNote")
				return nil
			}); err != nil {
				return nil, err
			}
		}
		_, err = hs.update(ctx, h.Child, h.Line, func(r *handoffRecord) {
			r.State, r.TryStartedAt, r.TimedOut, r.Action, r.ResolvedAt = handoffActive, task.Stamp(time.Now()), false, "", ""
		})
		f := subagentFields(l.Dir.Path(), child)
		f["event_type"] = trSubagentRetry
		f["by"] = "person"
		l.Emit(eventlog.Event{Type: eventlog.TranscriptEvent, Task: h.Child, Parent: id, Data: f})
	case actContinue:
		var rec handoffRecord
		rec, err = hs.update(ctx, h.Child, h.Line, func(r *handoffRecord) {
			r.State, r.Action, r.Accepted, r.ResolvedAt = handoffResolved, actContinue, true, task.Stamp(time.Now())
		})
		if err == nil {
			hs.resolved(&rec, child)
		}
		if err == nil && h.Source == "command" {
			return acceptAttempt(ctx, j, sp, h)
		}
	}
	if err != nil {
		return nil, err
	}
	return rerun(ctx, j)
}

// answerConverge records a person's choice for a convergence.
func answerConverge(ctx context.Context, j *job.Job, h hitlRecord, answer string) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	cg := &converger{cfg: j.Config, dir: l.Dir, parent: id, emit: l.Emit}
	_, err := cg.update(ctx, h.Key, func(r *convergeRecord) {
		r.Resolutions = append(r.Resolutions, answer)
		r.State = convergeWaiting
	})
	if err != nil {
		return nil, err
	}
	return rerun(ctx, j)
}

// rerun makes an answered task pending again: it runs from its first line.
func rerun(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	return l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		rec.Hold = nil
		if _, err := task.Apply(t, task.Restart, rec); err != nil {
			return err
		}
		task.Meta(t).Delete("resolve")
		return nil
	})
}

// acceptAttempt records an escalated attempt as its agent reported it.
func acceptAttempt(ctx context.Context, j *job.Job, sp task.Spec, h hitlRecord) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	ok := h.AgentSuccess != nil && *h.AgentSuccess
	why := "the agent failed; a person accepted the failed handoff"
	if ok {
		// Its work goes on its branch, when it runs in a git worktree.
		if err := j.CommitWork(ctx, sp, ""); job.Retryable(err) {
			return nil, err
		} else if err != nil {
			ok, why = false, err.Error()
		}
	}
	t, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		task.Meta(t).Delete("resolve")
		rec := task.RecordOf(t)
		rec.Hold = nil
		if ok {
			rec.Error = ""
			_, err := task.Apply(t, task.Succeed, rec)
			return err
		}
		rec.Error = why
		_, err := task.Apply(t, task.Fail, rec)
		return err
	})
	if err == nil {
		ev := eventlog.Event{Type: eventlog.TaskSucceeded, Task: id, Parent: sp.Parent, Attempt: sp.Attempt, Data: map[string]any{"acceptedBy": "person"}}
		if !ok {
			ev.Type = eventlog.TaskFailed
		}
		l.Emit(ev)
	}
	return t, err
}
