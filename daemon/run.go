package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// writeTimeout bounds a state write that must happen even while the daemon
// stops (the final state of an attempt).
const writeTimeout = 30 * time.Second

// persistCtx returns a context for writing final state: not cancelled with
// the job, but bounded.
func persistCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
}

// runTask runs a pending task: a workflow if it has metadata.workflowType,
// otherwise one attempt of its agent. The task is claimed first (claim.go):
// no agent starts before its file durably says it runs. The job may then
// wait for its slot; a claim whose agent never started is taken back
// (withdraw) when the daemon stops, the list is refused, or the file
// changes meanwhile.
func (d *Daemon) runTask(ctx context.Context, j *job) (*taskfile.Task, error) {
	defer j.agentExited() // the slot, if no agent took it over (only the first call counts)
	for again := 0; ; again++ {
		t, err := d.runTaskOnce(ctx, j, again > 0)
		if !errors.Is(err, errClaimChanged) {
			return t, err
		}
		if again == maxClaimAgain || context.Cause(ctx) != nil {
			return nil, errNotRunnable // back to the loop, which reads the file again
		}
	}
}

// maxClaimAgain bounds how often a job claims its task again because the
// file changed while it waited for its slot.
const maxClaimAgain = 3

// runTaskOnce is one try of runTask. again is set when the job, holding its
// slot, tries again after the file changed under its claim: then a task
// that now lists blockers goes back to the loop, which checks what only it
// knows (blockers, cycles) and prepares other tasks without holding a slot.
func (d *Daemon) runTaskOnce(ctx context.Context, j *job, again bool) (*taskfile.Task, error) {
	l, id := j.l, j.id
	runnable := pendingRunnable
	if again {
		runnable = func(t *taskfile.Task, s task.Spec) bool { return len(t.BlockedBy) == 0 && pendingRunnable(t, s) }
	}
	c, err := d.claimAttempt(ctx, l, id, runnable)
	if err != nil {
		return nil, err
	}
	t, sp := c.task, c.spec
	if wf, _ := t.Metadata.String("workflowType"); wf != "" {
		if err := j.acquire(ctx); err != nil {
			return d.notStarted(ctx, l, c, nil, err)
		}
		return d.runFlow(ctx, l, t, sp)
	}
	// The start is logged once the attempt does something: its prompt
	// commands run, its agent starts, or it ends without starting.
	logStart := sync.OnceFunc(func() {
		l.events.Append(eventlog.Event{Type: eventlog.TaskStarted, List: l.id, Task: id, Parent: sp.Parent, Attempt: sp.Attempt})
	})
	a, err := d.prepareAttempt(ctx, l, t, sp, logStart)
	if waiting, ok := asSuspended(err); ok {
		return waiting, nil // a /handoff or /converge line waits (acewait.go)
	}
	if err != nil {
		logStart()
		return d.finish(ctx, l, id, sp, agent.Result{Error: err.Error(), Summary: err.Error(), ExitCode: -1}, agent.NotStarted)
	}
	// The run folder is made while the job waits for its slot, and the
	// slot is given back the moment the agent exits: between two agents
	// of a slot there is no file to create. A loop whose condition is
	// checked by an agent of its own (a judge, or the untilCommand) keeps
	// the slot until that agent too has run.
	ov, err := taskOverrides(t)
	keepSlot := err == nil && ov.Loop != nil && (ov.Loop.Until != "" || ov.Loop.UntilCommand != "")
	a.Gate = &claimGate{j: j, claim: c, l: l, logStart: logStart, release: !keepSlot}
	res, out := d.run(ctx, a)
	if a.Stopped != nil {
		// The slot, if it came, stays with the job for another try.
		return d.notStarted(ctx, l, c, a, a.Stopped)
	}
	if !keepSlot {
		j.agentExited() // in case the agent never started
	}
	logStart() // an attempt that could not start (no program, no working directory)
	return d.afterAttempt(ctx, l, id, sp, res, out)
}

// prepareAttempt makes a plain task's attempt: its parallel items started,
// its leading prompt commands run, $RESULT references substituted, an auto
// task's request wrapped for the planner, and a return task given the step
// before it (the same claude session, when there is one, else its result).
// began is called before the first of these that acts (starts children,
// runs prompt commands).
func (d *Daemon) prepareAttempt(ctx context.Context, l *list, t *taskfile.Task, sp task.Spec, began func()) (*agent.Attempt, error) {
	a, err := d.newAttempt(l, t, sp, "", "")
	if err != nil {
		return nil, err
	}
	if err := d.startSubagent(l, t, sp, a); err != nil { // a delegated child's permission check (acedelegate.go)
		return nil, err
	}
	pl, err := d.promptPlan(l, t, sp)
	if err != nil {
		return nil, err
	}
	ov, err := taskOverrides(t)
	if err != nil {
		return nil, err
	}
	if len(ov.Parallel) > 0 || hasSlashLines(taskPrompt(t, sp)) {
		began()
	}
	if err := d.startParallel(ctx, l, t, ov); err != nil {
		return nil, err
	}
	prep, err := d.runLeading(ctx, l, t, sp, a.Cwd)
	if err != nil {
		return nil, err
	}
	content, err := substituteResults(l, sp.Parent, pl.content)
	if err != nil {
		return nil, fmt.Errorf("prompt: %w", err)
	}
	if ov.Auto {
		content = plannerPrompt(content)
	}
	if prev, _ := t.Metadata.Object("taskd").String("previous"); prev != "" {
		if session := sessionOf(l, prev); session != "" && a.Profile.Flags == "claude" {
			a.Resume = session
		} else if a.Profile.Flags != "none" {
			content = previousContext(l, prev) + "## This step\n\n" + content
		}
	}
	prep.script.Content = content
	prep.apply(a)
	return a, nil
}

// sessionOf returns the agent session a task's last attempt reported.
func sessionOf(l *list, id string) string {
	t, err := l.dir.Read(id)
	if err != nil {
		return ""
	}
	s, _ := t.Metadata.Object("taskd").Object("result").String("sessionId")
	return s
}

// afterAttempt records how a plain task's attempt ended and what follows
// from it: a waiting parent, an auto task's plan, the next iteration of a
// loop, or — once the task has succeeded for good — its return chain and
// trailing follow-ups, created before the success is written (so a parent
// never sees the task done while they are missing, and a restart creates
// them once) and recorded in the same write.
func (d *Daemon) afterAttempt(ctx context.Context, l *list, id string, sp task.Spec, res agent.Result, out agent.Outcome) (*taskfile.Task, error) {
	t, err := l.dir.Read(id)
	if err != nil {
		return nil, err
	}
	ov, _ := taskOverrides(t)
	if out != agent.Finished || !res.Success || d.exitVerdict(l, id, sp, out) != nil {
		ft, err := d.finish(ctx, l, id, sp, res, out)
		if ov.Loop != nil && (task.Of(ft) == task.Failed || task.Of(ft) == task.TimedOut) {
			l.events.Append(eventlog.Event{Type: eventlog.LoopExited, List: l.id, Task: id, Parent: sp.Parent, Attempt: sp.Attempt,
				Data: map[string]any{"exitReason": loopError, "error": res.Error}})
		}
		return ft, err
	}
	if len(children.Outstanding(l.dir, t)) > 0 {
		return d.finish(ctx, l, id, sp, res, out) // waits for its children first
	}
	if ov.Auto {
		if planned, _ := children.Named(l.dir, id, id+"-plan"); planned == "" {
			if err := d.runPlan(ctx, l, t, res); err != nil {
				res.Success, res.Error = false, err.Error()
				return d.finish(ctx, l, id, sp, res, agent.NotStarted)
			}
			return d.finish(ctx, l, id, sp, res, out) // waits for the plan
		}
	}
	var loopDone func(*taskfile.Task)
	if ov.Loop != nil {
		iteration, done, reason, stopped := d.loopCheck(ctx, l, t, sp, ov.Loop, res)
		if stopped != nil {
			// The condition was not checked: the iteration ends as the
			// stop says (interrupted: it runs again at the next start).
			res.Success = false
			res.Error = "the loop's condition was not checked: " + stopped.Error()
			res.Summary = res.Error
			return d.finish(ctx, l, id, sp, res, agent.StoppedOutcome(stopped))
		}
		if !done {
			return d.continueLoop(ctx, l, id, sp, res, iteration)
		}
		loopDone = func(t *taskfile.Task) {
			m := task.Meta(t)
			m.Set("loopIteration", iteration)
			m.Set("loopExit", reason)
		}
	}
	if err := d.createReturns(ctx, l, t, ov); err != nil {
		res.Success, res.Error = false, err.Error()
		return d.finish(ctx, l, id, sp, res, agent.NotStarted)
	}
	if err := d.createFollowUps(ctx, l, t); err != nil {
		res.Success, res.Error = false, err.Error()
		return d.finish(ctx, l, id, sp, res, agent.NotStarted)
	}
	return d.finishWith(ctx, l, id, sp, res, out, func(t *taskfile.Task) {
		m := task.Meta(t)
		if len(ov.Return) > 0 {
			m.Set("returnsDone", true)
		}
		if loopDone != nil {
			loopDone(t)
		}
	})
}

// apply gives the attempt the processed prompt: prompt.md with the injected
// round trips, the content alone as an exec agent's script, and the
// transcript in the run folder ($TASKD_TRANSCRIPT).
func (p *prepared) apply(a *agent.Attempt) {
	a.Prompt = p.render()
	if a.Profile.Flags == "none" {
		a.Script = p.script.Content
	}
	if len(p.results) > 0 {
		a.Env = map[string]string{"TASKD_RESULTS": strings.Join(p.results, "\n\n")}
	}
	if len(p.transcript) > 0 {
		data, _ := json.MarshalIndent(p.transcript, "", "  ")
		a.Files = map[string][]byte{"transcript.json": append(data, '\n')}
		if a.Env == nil {
			a.Env = map[string]string{}
		}
		a.Env["TASKD_TRANSCRIPT"] = filepath.Join(area.RunDir(a.ListDir, a.TaskID, a.N), "transcript.json")
	}
}

// newAttempt prepares attempt sp.Attempt of task t: the agent profile (the
// task's explicit agent, else agentName, else the default), the prompt, the
// working directory and the timeout.
func (d *Daemon) newAttempt(l *list, t *taskfile.Task, sp task.Spec, agentName, step string) (*agent.Attempt, error) {
	_, ownerProfile := task.Addressed(t)
	name, explicit := sp.Agent, true
	if name == "" {
		name = ownerProfile
	}
	if name == "" {
		name, explicit = agentName, false
	}
	prof, err := d.cfg.ResolveAgent(name, explicit)
	if err != nil {
		return nil, err
	}
	prompt := t.Description
	if sp.HasPrompt {
		prompt = sp.Prompt
	}
	cwd, err := taskCwd(sp.Cwd)
	if err != nil {
		return nil, err
	}
	timeout := d.cfg.Timeout
	if prof.Timeout > 0 {
		timeout = prof.Timeout
	}
	if sp.Timeout > 0 {
		timeout = sp.Timeout
	}
	a := &agent.Attempt{
		ListDir: l.dir.Path(), ListID: l.id, TaskID: t.ID, Parent: sp.Parent, N: sp.Attempt, Step: step,
		Profile: prof, Prompt: prompt, Cwd: cwd, Timeout: timeout, Spec: sp,
	}
	if prof.Flags == "none" {
		a.Script = prompt // a shell script is the prompt's content alone
	}
	return a, nil
}

// taskCwd resolves metadata.taskd.cwd: ~ is the home directory, a relative
// path is relative to it, and no cwd means the home directory.
func taskCwd(cwd string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil && (cwd == "" || !filepath.IsAbs(cwd)) {
		return "", fmt.Errorf("no working directory: set metadata.taskd.cwd (%v)", err)
	}
	switch {
	case cwd == "" || cwd == "~":
		return home, nil
	case strings.HasPrefix(cwd, "~/"):
		return filepath.Join(home, cwd[2:]), nil
	case !filepath.IsAbs(cwd):
		return filepath.Join(home, cwd), nil
	}
	return filepath.Clean(cwd), nil
}

// finish records how attempt sp.Attempt of task id ended: completed on
// success; pending with state failed, timed_out or cancelled otherwise
// (or retrying, when metadata.taskd.retries allows another attempt);
// pending with no state when the daemon stopped under it, so it runs again.
// An attempt whose agent asked for it with taskd handoff or taskd converge
// ends failed or needs_human instead (aceverdict.go).
func (d *Daemon) finish(ctx context.Context, l *list, id string, sp task.Spec, res agent.Result, out agent.Outcome) (*taskfile.Task, error) {
	if v := d.exitVerdict(l, id, sp, out); v != nil { // taskd handoff or converge asked for it (aceverdict.go)
		if v.Action == verdictNeedsHuman {
			return d.finishNeedsHuman(ctx, l, id, sp, res, v)
		}
		res = v.fail(res)
	}
	return d.finishWith(ctx, l, id, sp, res, out, nil)
}

// finishWith is finish without a verdict check; onSuccess, if set, also
// changes the task in the write that records its success.
func (d *Daemon) finishWith(ctx context.Context, l *list, id string, sp task.Spec, res agent.Result, out agent.Outcome, onSuccess func(*taskfile.Task)) (*taskfile.Task, error) {
	wctx, cancel := persistCtx(ctx)
	defer cancel()
	now := time.Now()
	var evType string
	var evData map[string]any
	t, err := l.dir.Update(wctx, id, func(t *taskfile.Task) error {
		m := task.Meta(t)
		m.Set("finishedAt", task.Stamp(now))
		m.Set("result", shortResult(res, area.RelRunDir(id, sp.Attempt)))
		failures, _ := m.Int("failures")
		var ev task.Event
		switch {
		case out == agent.Finished && res.Success:
			if waiting := children.Outstanding(l.dir, t); len(waiting) > 0 {
				// The agent ended its turn while its children still run:
				// it is resumed with their results once they have ended.
				ev = task.Wait
				m.Delete("finishedAt")
				evType = eventlog.TaskWaiting
				evData = map[string]any{"children": waiting}
				break
			}
			ev = task.Succeed
			m.Delete("error")
			if onSuccess != nil {
				onSuccess(t)
			}
			evType = eventlog.TaskSucceeded
		case out == agent.Interrupted:
			ev = task.Interrupt
			m.Delete("finishedAt")
			n, _ := m.Int("interrupted")
			m.Set("interrupted", n+1)
			evType = eventlog.TaskInterrupted
		case out == agent.Cancelled:
			ev = task.Cancel
			m.Set("error", "cancelled")
			evType = eventlog.TaskCancelled
		default:
			failures++
			m.Set("failures", failures)
			msg := res.Error
			if out != agent.NotStarted {
				msg += "; logs: " + filepath.Join(l.dir.Path(), area.RelRunDir(id, sp.Attempt))
			}
			m.Set("error", msg)
			evType = eventlog.TaskFailed
			if out == agent.TimedOut {
				evType = eventlog.TaskTimedOut
			}
			if out != agent.NotStarted && int(failures) <= sp.Retries {
				at := now.Add(backoff(int(failures)))
				ev = task.Retry
				m.Set("retryAt", task.Stamp(at))
				evData = map[string]any{"retryAt": task.Stamp(at), "failures": failures, "retries": sp.Retries}
			} else if out == agent.TimedOut {
				ev = task.TimeOut
			} else {
				ev = task.Fail
			}
		}
		_, err := task.Record(t, ev)
		return err
	})
	data := map[string]any{"success": res.Success, "summary": res.Summary, "exitCode": res.ExitCode, "durationMs": res.DurationMs}
	if res.Error != "" && !res.Success {
		data["error"] = res.Error
	}
	if evType == eventlog.TaskWaiting {
		l.events.Append(eventlog.Event{Type: eventlog.TaskWaiting, List: l.id, Task: id, Parent: sp.Parent, Attempt: sp.Attempt, Data: evData})
	} else {
		l.events.Append(eventlog.Event{Type: evType, List: l.id, Task: id, Parent: sp.Parent, Attempt: sp.Attempt, Data: data})
		if evData != nil {
			l.events.Append(eventlog.Event{Type: eventlog.TaskRetrying, List: l.id, Task: id, Parent: sp.Parent, Attempt: sp.Attempt, Data: evData})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("record the end of attempt %d: %w", sp.Attempt, err)
	}
	return t, nil
}

// backoff is the wait before retry n (1s, 2s, 4s, … at most 5 minutes).
func backoff(n int) time.Duration {
	d := time.Second << min(n-1, 9)
	return min(d, 5*time.Minute)
}

// shortResult is the result as recorded in metadata.taskd.result.
func shortResult(r agent.Result, runDir string) map[string]any {
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

// cancelIdle cancels a task that is not running (metadata.taskd.cancel was
// set while it waited).
func (d *Daemon) cancelIdle(ctx context.Context, j *job) (*taskfile.Task, error) {
	var sp task.Spec
	t, err := j.l.dir.Update(ctx, j.id, func(t *taskfile.Task) error {
		s, err := task.ReadSpec(t)
		if err != nil || !s.Cancel || !cancellable(s.State) {
			return errNotRunnable
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
	j.l.events.Append(eventlog.Event{Type: eventlog.TaskCancelled, List: j.l.id, Task: j.id, Parent: sp.Parent, Attempt: sp.Attempt})
	return t, nil
}

// errNoFlow is returned for workflow operations while no workflow engine is
// configured.
var errNoFlow = errors.New("workflows are not available")
