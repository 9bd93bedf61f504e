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
// decisions applied to the record in the same write), or waiting if the agent ended its turn
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
func (j *Job) Finish(ctx context.Context, sp task.Spec, res agent.Result, out agent.Outcome, onSuccess func(*task.Record)) (*taskfile.Task, error) {
	if out == agent.Interrupted && res.Outcome == Detached {
		return nil, ErrNotRunnable // it goes on elsewhere; recovered at the next start
	}
	e := attemptEnd{spec: sp, res: res, out: out, runDir: area.RelRunDir(j.ID, sp.Attempt), session: res.SessionID, onSuccess: onSuccess}
	if out == agent.Interrupted && e.session == "" {
		e.session = agent.Session(j.List.RunDir(j.ID, sp.Attempt))
	}
	return j.finish(ctx, e)
}

// FinishWaiting records attempt sp.Attempt of the job's task, whose agent
// succeeded, as Finish does, for a caller that found the task must wait
// — for children whose results it has not been given, its parallel
// items, its plan, the steps of its return chain: the task is written
// waiting (with onSuccess's decisions) even if all it waited for has
// ended since the caller looked. Finish would then record a success, and
// what the caller does only once they have ended — the return chain, the
// follow-ups, a vote, the chain's outcome — would never be done. The
// loop resumes a waiting task whose children have all ended at once, and
// the resume decides again from the file.
func (j *Job) FinishWaiting(ctx context.Context, sp task.Spec, res agent.Result, onSuccess func(*task.Record)) (*taskfile.Task, error) {
	return j.finish(ctx, attemptEnd{spec: sp, res: res, out: agent.Finished, runDir: area.RelRunDir(j.ID, sp.Attempt), session: res.SessionID, onSuccess: onSuccess, waits: true})
}

// finish is Finish of attempt end e.
func (j *Job) finish(ctx context.Context, e attemptEnd) (*taskfile.Task, error) {
	sp, res, out := e.spec, e.res, e.out
	var r recorded
	var userDone bool
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
		t, err = j.update(wctx, func(t *taskfile.Task) error {
			e.now = j.Now()
			userDone = t.Status == taskfile.StatusCompleted && task.Of(t) != task.Succeeded
			if userDone {
				// Completed by someone else while the agent ran: that
				// stands, whatever the attempt would have led to.
				rec := task.RecordOf(t)
				rec.Result = task.Object(ShortResult(res, e.runDir))
				rec.InterruptedSession = ""
				return completeByUser(t, rec, e.now)
			}
			r = j.recordEnd(t, e)
			_, err := task.End(t, r.end.move, r.rec)
			return err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record the end of attempt %d: %w", sp.Attempt, err)
	}
	j.SettleResult(sp.Attempt)
	end := r.end
	ev := eventlog.Event{Type: end.log, Parent: sp.Parent, Attempt: sp.Attempt}
	switch {
	case userDone:
		j.Emit(eventlog.Event{Type: eventlog.TaskCompletedByUser, Parent: sp.Parent, Attempt: sp.Attempt,
			Data: map[string]any{"state": string(task.Running), "outcome": end.log, "summary": res.Summary}})
	case end.move == task.Wait:
		ev.Data = map[string]any{"children": r.waiting}
		j.Emit(ev)
	case end.move == task.Pause, end.move == task.AskPerson:
		ev.Data = r.endInfo
		j.Emit(ev)
	default:
		ev.Data = map[string]any{"success": res.Success, "summary": res.Summary, "exitCode": res.ExitCode, "durationMs": res.DurationMs}
		if res.Error != "" && !res.Success {
			ev.Data["error"] = res.Error
		}
		if end.move == task.Cancel {
			ev.Data["error"] = r.rec.Error
		}
		j.Emit(ev)
		if r.retryData != nil {
			j.Emit(eventlog.Event{Type: eventlog.TaskRetrying, Parent: sp.Parent, Attempt: sp.Attempt, Data: r.retryData})
		}
	}
	return t, nil
}

// An attemptEnd is how an attempt ended, as Finish records it.
type attemptEnd struct {
	spec      task.Spec
	res       agent.Result
	out       agent.Outcome
	runDir    string             // the attempt's run folder, relative to the list
	session   string             // the session an interrupted attempt's next resumes
	onSuccess func(*task.Record) // what a success (or a wait) records besides (nil: nothing)
	// waits is set when the caller found that a success waits
	// (FinishWaiting): it waits even if nothing is left to wait for.
	waits bool
	now   time.Time
}

// recorded is what recordEnd decided: the ending, the record the task is
// left with, what the ending's event carries (a pause, a question about
// denied tools), the retry's event data and the children the task waits
// for.
type recorded struct {
	end                ending
	rec                task.Record
	endInfo, retryData map[string]any
	waiting            []string
}

// recordEnd decides how attempt e ended for task t, being written: the
// ending and the whole record it leaves, which task.End then applies in
// one call. The fields that are not the record's (progress, a grant
// spent, a question to a person, what a success decided) are set in t.
func (j *Job) recordEnd(t *taskfile.Task, e attemptEnd) recorded {
	m := task.Meta(t)
	res, out, sp := e.res, e.out, e.spec
	r := recorded{rec: task.RecordOf(t)}
	rec := &r.rec
	rec.FinishedAt = e.now
	rec.Result = task.Object(ShortResult(res, e.runDir))
	if out == agent.Finished && res.Success {
		r.waiting = children.Ungiven(j.List.Dir, t)
	}
	ask := sp.OnDenied != task.DeniedFail
	failed := out == agent.Finished && !res.Success && !(ask && len(res.Denials) > 0) || out == agent.TimedOut || out == agent.NotStarted || out == agent.OverBudget
	if failed {
		rec.Failures++
	}
	retry := failed && out != agent.NotStarted && out != agent.OverBudget && len(res.Denials) == 0 && rec.Failures <= sp.Retries
	r.end = endOf(out, res, len(r.waiting) > 0 || e.waits, retry, ask)
	if r.end.move == task.Pause {
		r.end, r.endInfo = j.pauseEnd(rec, res, e.now) // too many pauses in a row fail
	}
	if res.Progress != nil {
		rec.Progress = task.Object(asValue(res.Progress))
	}
	if r.end.move != task.Pause {
		rec.Pause, rec.Pauses = nil, 0
	}
	rec.InterruptedSession = ""
	rec.Grant = nil // given to this attempt
	switch r.end.move {
	case task.Wait:
		// The agent ended its turn with children whose results it has
		// not been given, or with its return chain to run: it is resumed
		// once all have ended, at once if they have. What its attempt
		// decided (onSuccess) is recorded now.
		rec.FinishedAt = time.Time{}
		e.decided(rec)
	case task.Succeed:
		rec.Error = ""
		e.decided(rec)
	case task.Interrupt:
		rec.FinishedAt = time.Time{}
		rec.Interrupted++
		// The next attempt resumes this session (Resumable).
		rec.InterruptedSession = e.session
	case task.Cancel:
		from := task.Running
		if task.Of(t) == task.Starting {
			from = task.Starting // its agent never started
		}
		rec.Error = cancelError(j.List.Dir, t, *rec, from, sp.Attempt)
	case task.Pause:
		// paused: pauseEnd wrote the pause and when it ends (retryAt)
	case task.AskPerson:
		r.endInfo = askAboutDenials(rec, res, filepath.Join(j.List.Path(), e.runDir))
		m.Delete("resolve")
		rec.Error = agent.DeniedText(res.Denials)
	default:
		msg := res.Error
		if out != agent.NotStarted {
			msg += "; logs: " + filepath.Join(j.List.Path(), e.runDir)
		}
		rec.Error = msg
		if r.end.move == task.Retry {
			at := e.now.Add(Backoff(rec.Failures))
			rec.RetryAt = at
			r.retryData = map[string]any{"retryAt": task.Stamp(at), "failures": int64(rec.Failures), "retries": sp.Retries}
		}
	}
	return r
}

// decided applies to rec what the attempt decided, if it succeeded.
func (e attemptEnd) decided(rec *task.Record) {
	if e.onSuccess != nil {
		e.onSuccess(rec)
	}
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
	return ResultIn(task.RecordOf(t))
}

// ResultIn is ResultOf for a record already read.
func ResultIn(rec task.Record) (summary string, costUSD *float64) {
	r := rec.Result
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
