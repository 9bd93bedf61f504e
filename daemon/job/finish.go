package job

import (
	"context"
	"encoding/json"
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
	agent.Paused:      {task.Pause, eventlog.TaskPaused},
	agent.OverBudget:  {task.Fail, eventlog.TaskFailed},
}

// endOf returns how an attempt that ended with out and res is recorded:
// a success completes the task, or makes it wait for the children whose
// results it has not been given (resumed at once if they have all ended); denied tool calls ask a person (ask) or fail; a failure with
// retries left retries; a usage limit pauses; anything else ends as the
// table says.
func endOf(out agent.Outcome, res agent.Result, waiting, retry, ask bool) ending {
	switch {
	case out == agent.Finished && len(res.Denials) > 0 && ask:
		return ending{task.AskPerson, eventlog.TaskNeedsHuman}
	case out == agent.Finished && len(res.Denials) > 0:
		return ending{task.Fail, eventlog.TaskFailed}
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
// with children whose results it has not been given, running or ended; retrying with a backoff while
// metadata.taskd.retries allows; failed, timed out or cancelled
// otherwise (a cancelled task's children are told to cancel first); pending
// with no state when the daemon stopped under it, so it runs again. The
// end is recorded over whatever another writer left in the file: the
// attempt ran (task.Record); but a status set to completed meanwhile (by
// a person, or the agent itself) stands: the task completes. A write that
// fails is tried again until it works, the task held meanwhile (Persist):
// the attempt's result is never lost to a re-run. Events are logged once
// the write is done.
func (j *Job) Finish(ctx context.Context, sp task.Spec, res agent.Result, out agent.Outcome, onSuccess map[string]any) (*taskfile.Task, error) {
	if out == agent.Interrupted && res.Outcome == Detached {
		return nil, ErrNotRunnable // it goes on elsewhere; recovered at the next start
	}
	var end ending
	var waiting []string
	var retryData, endInfo map[string]any
	var userDone bool
	runDir := area.RelRunDir(j.ID, sp.Attempt)
	session := res.SessionID
	if out == agent.Interrupted && session == "" {
		session = agent.Session(j.List.RunDir(j.ID, sp.Attempt))
	}
	var t *taskfile.Task
	err := j.Persist(ctx, fmt.Sprintf("the end of attempt %d is not recorded yet (its result is kept until it is)", sp.Attempt), sp.Parent, func(wctx context.Context) error {
		if out == agent.Cancelled {
			// The task's children are told first: a restart between the
			// two writes finds the task still cancelling, never a
			// cancelled task with children that may run.
			cur, err := j.List.Dir.Read(j.ID)
			if err != nil {
				return err
			}
			if err := j.CancelBelow(wctx, cur); err != nil {
				return err
			}
		}
		var err error
		t, err = j.List.Dir.Update(wctx, j.ID, func(t *taskfile.Task) error {
			now := time.Now()
			retryData, endInfo, waiting, userDone = nil, nil, nil, false
			m := task.Meta(t)
			if t.Status == taskfile.StatusCompleted && task.Of(t) != task.Succeeded {
				// Completed by someone else while the agent ran: that
				// stands, whatever the attempt would have led to.
				m.Set("result", ShortResult(res, runDir))
				m.Delete("interruptedSession")
				userDone = true
				return completeByUser(t, m, now)
			}
			end, endInfo, retryData, waiting = j.recordEnd(t, m, sp, res, out, runDir, session, onSuccess, now)
			_, err := task.Record(t, end.move)
			return err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record the end of attempt %d: %w", sp.Attempt, err)
	}
	j.SettleResult(sp.Attempt)
	ev := eventlog.Event{Type: end.log, Parent: sp.Parent, Attempt: sp.Attempt}
	switch {
	case userDone:
		j.Emit(eventlog.Event{Type: eventlog.TaskCompletedByUser, Parent: sp.Parent, Attempt: sp.Attempt,
			Data: map[string]any{"state": string(task.Running), "outcome": end.log, "summary": res.Summary}})
	case end.move == task.Wait:
		ev.Data = map[string]any{"children": waiting}
		j.Emit(ev)
	case end.move == task.Pause, end.move == task.AskPerson:
		ev.Data = endInfo
		j.Emit(ev)
	default:
		ev.Data = map[string]any{"success": res.Success, "summary": res.Summary, "exitCode": res.ExitCode, "durationMs": res.DurationMs}
		if res.Error != "" && !res.Success {
			ev.Data["error"] = res.Error
		}
		if end.move == task.Cancel {
			ev.Data["error"], _ = task.Meta(t).String("error")
		}
		j.Emit(ev)
		if retryData != nil {
			j.Emit(eventlog.Event{Type: eventlog.TaskRetrying, Parent: sp.Parent, Attempt: sp.Attempt, Data: retryData})
		}
	}
	return t, nil
}

// recordEnd sets in m (the metadata of task t, being written) how the
// attempt ended, and returns the ending, what its event carries (a pause,
// a question about denied tools), the retry's event data and the children
// the task waits for.
func (j *Job) recordEnd(t *taskfile.Task, m *taskfile.Object, sp task.Spec, res agent.Result, out agent.Outcome, runDir, session string, onSuccess map[string]any, now time.Time) (end ending, endInfo, retryData map[string]any, waiting []string) {
	m.Set("finishedAt", task.Stamp(now))
	m.Set("result", ShortResult(res, runDir))
	failures, _ := m.Int("failures")
	if out == agent.Finished && res.Success {
		waiting = children.Ungiven(j.List.Dir, t)
	}
	ask := sp.OnDenied != task.DeniedFail
	failed := out == agent.Finished && !res.Success && !(ask && len(res.Denials) > 0) || out == agent.TimedOut || out == agent.NotStarted || out == agent.OverBudget
	if failed {
		failures++
		m.Set("failures", failures)
	}
	retry := failed && out != agent.NotStarted && out != agent.OverBudget && len(res.Denials) == 0 && int(failures) <= sp.Retries
	end = endOf(out, res, len(waiting) > 0, retry, ask)
	if end.move == task.Pause {
		end, endInfo = j.pauseEnd(m, res, now) // too many pauses in a row fail
	}
	if res.Progress != nil {
		m.Set("progress", asValue(res.Progress))
	}
	if end.move != task.Pause {
		m.Delete("pause")
		m.Delete("pauses")
	}
	m.Delete("interruptedSession")
	m.Delete("grant") // given to this attempt
	switch end.move {
	case task.Wait:
		// The agent ended its turn with children whose results it has
		// not been given, or with its return chain to run: it is resumed
		// once all have ended, at once if they have. What its attempt
		// decided (onSuccess) is recorded now.
		m.Delete("finishedAt")
		for _, k := range sortedKeys(onSuccess) {
			m.Set(k, onSuccess[k])
		}
	case task.Succeed:
		m.Delete("error")
		for _, k := range sortedKeys(onSuccess) {
			m.Set(k, onSuccess[k])
		}
	case task.Interrupt:
		m.Delete("finishedAt")
		n, _ := m.Int("interrupted")
		m.Set("interrupted", n+1)
		if session != "" {
			// The next attempt resumes this session (Resumable).
			m.Set("interruptedSession", session)
		}
	case task.Cancel:
		from := task.Running
		if task.Of(t) == task.Starting {
			from = task.Starting // its agent never started
		}
		m.Set("error", cancelError(j.List.Dir, t, m, from, sp.Attempt))
	case task.Pause:
		// paused: pauseEnd wrote the pause and when it ends (retryAt)
	case task.AskPerson:
		endInfo = askAboutDenials(m, res, filepath.Join(j.List.Path(), runDir))
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
	return end, endInfo, retryData, waiting
}

// Backoff is the wait before retry n (1s, 2s, 4s, … at most 5 minutes).
func Backoff(n int) time.Duration {
	d := time.Second << min(n-1, 9)
	return min(d, 5*time.Minute)
}

// SettleResult moves the result of attempt n, kept elsewhere while its
// run folder could not take it, into the run folder, now that the
// attempt's end is recorded (agent.SettleResult).
func (j *Job) SettleResult(n int) {
	if err := agent.SettleResult(j.List.RunDir(j.ID, n)); err != nil {
		j.Log.Warn("the recorded result stays kept outside its run folder", "list", j.List.ID, "task", j.ID, "attempt", n, "err", err)
	}
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
	if len(r.OutputCut) > 0 {
		cut := map[string]any{}
		for name, n := range r.OutputCut {
			cut[name] = n
		}
		m["outputCut"] = cut
	}
	return m
}

// ResultOf returns the summary and cost metadata.taskd.result records of
// task t's latest attempt (ShortResult); cost is nil when the agent
// reported none.
func ResultOf(t *taskfile.Task) (summary string, costUSD *float64) {
	r := t.Metadata.Object("taskd").Object("result")
	summary, _ = r.String("summary")
	if v, ok := r.Get("costUsd"); ok {
		if n, ok := v.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				costUSD = &f
			}
		}
	}
	return summary, costUSD
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
