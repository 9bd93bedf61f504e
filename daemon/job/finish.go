package job

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// An ending is how an attempt's outcome is recorded: the event that moves
// the task, the event logged, and what the write changes besides.
type ending struct {
	move task.Event
	log  string
}

// endings is the table from an attempt's outcome to the task's next state
// and the logged event. A finished attempt depends on its result (endOf).
var endings = map[agent.Outcome]ending{
	agent.Interrupted: {task.Interrupt, eventlog.TaskInterrupted},
	agent.Cancelled:   {task.Cancel, eventlog.TaskCancelled},
	agent.TimedOut:    {task.TimeOut, eventlog.TaskTimedOut},
	agent.NotStarted:  {task.Fail, eventlog.TaskFailed},
}

// endOf returns how an attempt that ended with out and res is recorded:
// a success completes the task, or makes it wait for the children still
// running; a failure with retries left retries; anything else ends as the
// table says.
func endOf(out agent.Outcome, res agent.Result, waiting bool, retry bool) ending {
	switch {
	case out == agent.Finished && res.Success && waiting:
		return ending{task.Wait, eventlog.TaskWaiting}
	case out == agent.Finished && res.Success:
		return ending{task.Succeed, eventlog.TaskSucceeded}
	case out == agent.Finished:
		if retry {
			return ending{task.Retry, eventlog.TaskFailed}
		}
		return ending{task.Fail, eventlog.TaskFailed}
	case out == agent.TimedOut && retry:
		return ending{task.Retry, eventlog.TaskTimedOut}
	}
	return endings[out]
}

// Finish records how attempt sp.Attempt of the job's task ended, in one
// durable write, and logs it: completed on success (with onSuccess's
// fields set in the same write), or waiting if the agent ended its turn
// with children still running; retrying with a backoff while
// metadata.taskd.retries allows; failed, timed out or cancelled
// otherwise; pending with no state when the daemon stopped under it, so
// it runs again. The end is recorded over whatever another writer left in
// the file: the attempt ran (task.Record).
func (j *Job) Finish(ctx context.Context, sp task.Spec, res agent.Result, out agent.Outcome, onSuccess map[string]any) (*taskfile.Task, error) {
	if out == agent.Interrupted && res.Outcome == Detached {
		return nil, ErrNotRunnable // it goes on elsewhere; recovered at the next start
	}
	wctx, cancel := WriteContext(ctx)
	defer cancel()
	now := time.Now()
	var end ending
	var waiting []string
	var retryData map[string]any
	runDir := area.RelRunDir(j.ID, sp.Attempt)
	t, err := j.List.Dir.Update(wctx, j.ID, func(t *taskfile.Task) error {
		m := task.Meta(t)
		m.Set("finishedAt", task.Stamp(now))
		m.Set("result", ShortResult(res, runDir))
		failures, _ := m.Int("failures")
		if out == agent.Finished && res.Success {
			waiting = children.Outstanding(j.List.Dir, t)
		}
		failed := out == agent.Finished && !res.Success || out == agent.TimedOut || out == agent.NotStarted
		if failed {
			failures++
			m.Set("failures", failures)
		}
		retry := failed && out != agent.NotStarted && int(failures) <= sp.Retries
		end = endOf(out, res, len(waiting) > 0, retry)
		switch end.move {
		case task.Wait:
			// The agent ended its turn while its children still run: it
			// is resumed with their results once they have ended.
			m.Delete("finishedAt")
		case task.Succeed:
			m.Delete("error")
			for _, k := range sortedKeys(onSuccess) {
				m.Set(k, onSuccess[k])
			}
		case task.Interrupt:
			m.Delete("finishedAt")
			n, _ := m.Int("interrupted")
			m.Set("interrupted", n+1)
		case task.Cancel:
			m.Set("error", "cancelled")
		default:
			msg := res.Error
			if out != agent.NotStarted {
				msg += "; logs: " + filepath.Join(j.List.Path(), runDir)
			}
			m.Set("error", msg)
			if end.move == task.Retry {
				at := now.Add(Backoff(int(failures)))
				m.Set("retryAt", task.Stamp(at))
				retryData = map[string]any{"retryAt": task.Stamp(at), "failures": failures, "retries": sp.Retries}
			}
		}
		_, err := task.Record(t, end.move)
		return err
	})
	ev := eventlog.Event{Type: end.log, Parent: sp.Parent, Attempt: sp.Attempt}
	if end.move == task.Wait {
		ev.Data = map[string]any{"children": waiting}
		j.Emit(ev)
	} else {
		ev.Data = map[string]any{"success": res.Success, "summary": res.Summary, "exitCode": res.ExitCode, "durationMs": res.DurationMs}
		if res.Error != "" && !res.Success {
			ev.Data["error"] = res.Error
		}
		j.Emit(ev)
		if retryData != nil {
			j.Emit(eventlog.Event{Type: eventlog.TaskRetrying, Parent: sp.Parent, Attempt: sp.Attempt, Data: retryData})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("record the end of attempt %d: %w", sp.Attempt, err)
	}
	return t, nil
}

// Backoff is the wait before retry n (1s, 2s, 4s, … at most 5 minutes).
func Backoff(n int) time.Duration {
	d := time.Second << min(n-1, 9)
	return min(d, 5*time.Minute)
}

// ShortResult is r as recorded in metadata.taskd.result.
func ShortResult(r agent.Result, runDir string) map[string]any {
	m := map[string]any{"success": r.Success, "summary": agent.Truncate(r.Summary, 500), "exitCode": r.ExitCode, "runDir": runDir}
	if r.SessionID != "" {
		m["sessionId"] = r.SessionID
	}
	if r.CostUSD != nil {
		m["costUsd"] = *r.CostUSD
	}
	if r.Answer != "" {
		m["answer"] = agent.Truncate(r.Answer, 500)
	}
	if r.Confidence != nil {
		m["confidence"] = *r.Confidence
	}
	return m
}

// CancelIdle cancels the job's task, which is not running: its
// metadata.taskd.cancel was set while it waited.
func (j *Job) CancelIdle(ctx context.Context) (*taskfile.Task, error) {
	var sp task.Spec
	t, err := j.List.Dir.Update(ctx, j.ID, func(t *taskfile.Task) error {
		s, err := task.ReadSpec(t)
		if err != nil || !s.Cancel || !Cancellable(s.State) {
			return ErrNotRunnable
		}
		sp = s
		if _, err := task.Move(t, task.Cancel); err != nil {
			return err
		}
		m := task.Meta(t)
		m.Set("error", "cancelled before it ran")
		m.Set("finishedAt", task.Stamp(time.Now()))
		return nil
	})
	if err != nil {
		return nil, err
	}
	j.Emit(eventlog.Event{Type: eventlog.TaskCancelled, Parent: sp.Parent, Attempt: sp.Attempt})
	return t, nil
}

// Cancellable reports whether a task in state s that is not running can
// be cancelled by metadata.taskd.cancel.
func Cancellable(s task.State) bool {
	_, _, err := task.Next(s, task.Cancel)
	return err == nil && s != task.Running
}

// KeepWaiting records a "leave" answer: the task keeps waiting for a
// person, the answer is consumed.
func (j *Job) KeepWaiting(ctx context.Context) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	t, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		task.Meta(t).Delete("resolve")
		return nil
	})
	if err == nil {
		l.Events.Append(eventlog.Event{Type: eventlog.HumanResolved, List: l.ID, Task: id, Step: currentStepOf(t), Data: map[string]any{"answer": "leave"}})
	}
	return t, err
}

func currentStepOf(t *taskfile.Task) string {
	if t == nil {
		return ""
	}
	s, _ := t.Metadata.String("currentStep")
	return s
}
