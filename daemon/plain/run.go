// Package plain runs a plain task, one that is not a workflow: its claim;
// its prompt's leading commands (/read, /push, /run and the subagent
// lines) before its agent; the attempt itself; and what follows it — the
// children it waits for, its loop's next iteration, its return chain, its
// trailing /push lines — recorded in the write that ends the attempt. A
// parent whose children have ended is resumed here with their results.
// docs/prompt-commands.md is the manual.
package plain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/chain"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Run runs a pending task: a workflow if it has metadata.workflowType,
// otherwise one attempt of its agent. The task is claimed first (claim.go):
// no agent starts before its file durably says it runs. The job may then
// wait for its slot; a claim whose agent never started is taken back
// (withdraw) when the daemon stops, the list is refused, or the file
// changes meanwhile.
func Run(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	defer j.Slot.Release() // the slot, if no agent took it over (only the first call counts)
	for again := 0; ; again++ {
		t, err := runTaskOnce(ctx, j, again > 0)
		if !errors.Is(err, job.ErrClaimChanged) {
			return t, err
		}
		if again == maxClaimAgain || context.Cause(ctx) != nil {
			return nil, job.ErrNotRunnable // back to the loop, which reads the file again
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
func runTaskOnce(ctx context.Context, j *job.Job, again bool) (*taskfile.Task, error) {
	c, err := claimRun(ctx, j, func(t *taskfile.Task, s task.Spec) bool {
		return job.Pending(t, s, j.Now()) && !(again && len(t.BlockedBy) > 0)
	})
	if err != nil {
		return nil, err
	}
	t, sp := c.Task, c.Spec
	if !quietPreparation(t, sp) {
		// What it does before its agent (a worktree, children, prompt
		// commands) comes after its claim is durable.
		if err := j.Durable(c); err != nil {
			return j.NotStarted(ctx, c, nil, err)
		}
	}
	// The start is logged once the attempt does something: its prompt
	// commands run, its agent starts, or it ends without starting.
	logStart := sync.OnceFunc(func() {
		j.RecordStart(t, sp, eventlog.Event{Attempt: sp.Attempt})
	})
	a, err := prepareAttempt(ctx, j, t, sp, logStart)
	if waiting, ok := subagent.Suspended(err); ok {
		return waiting, nil // a /handoff or /converge line waits
	}
	if job.Retryable(err) {
		// Something its commands had to write could not be (a full disk,
		// say): no agent starts, the claim is taken back, the task held.
		return j.NotStarted(ctx, c, nil, err)
	}
	if err != nil {
		logStart()
		return subagent.Finish(ctx, j, sp, agent.Result{Error: err.Error(), Summary: err.Error(), ExitCode: -1}, agent.NotStarted)
	}
	if sp.State == task.Paused {
		resumeAfterLimit(t, a)
	}
	// The run folder is made while the job waits for its slot, and the
	// slot is given back the moment the agent exits: between two agents
	// of a slot there is no file to create. A loop whose condition is
	// checked by an agent of its own (a judge, or the untilCommand) keeps
	// the slot until that agent too has run.
	ov, err := chain.Overrides(t)
	keepSlot := err == nil && ov.Loop != nil && (ov.Loop.Until != "" || ov.Loop.UntilCommand != "")
	a.Gate = &claimGate{j: j, claim: c, logStart: logStart, release: !keepSlot}
	res, out := j.RunAgent(ctx, a)
	if a.Stopped != nil {
		// The slot, if it came, stays with the job for another try.
		return j.NotStarted(ctx, c, a, a.Stopped)
	}
	if !keepSlot {
		j.Slot.Release() // in case the agent never started
	}
	logStart() // an attempt that could not start (no program, no working directory)
	return afterAttempt(ctx, j, sp, res, out)
}

// quietPreparation reports whether preparing the attempt of t with spec
// sp does nothing outside its run folder before its agent starts: no git
// worktree, no parallel items, no prompt commands. Only then may its
// claim become durable as late as its agent's start (job.Start).
func quietPreparation(t *taskfile.Task, sp task.Spec) bool {
	ov, err := chain.Overrides(t)
	return err == nil && !sp.Worktree && len(ov.Parallel) == 0 && !prompt.HasCommands(task.Prompt(t, sp))
}

// claimRun claims the job's plain task for a new attempt if runnable
// accepts it: the claim compiles its prompt's /subtask or /command block
// into fields and numbers the attempt (a plain task's attempt is its run).
// A task that has become a workflow is not runnable here.
func claimRun(ctx context.Context, j *job.Job, runnable func(*taskfile.Task, task.Spec) bool) (*job.Claim, error) {
	return j.ClaimToStart(ctx, func(t *taskfile.Task, sp *task.Spec) error {
		if wf, _ := t.Metadata.String("workflowType"); wf != "" || !runnable(t, *sp) {
			return job.ErrNotRunnable // a workflow is package flow's
		}
		if pl, err := chain.PlanOf(j.Scope, *sp); err == nil && pl.HasBlock {
			chain.CompileBlock(t, pl)
			if c, err := task.ReadSpec(t); err == nil {
				c.Attempt = sp.Attempt
				*sp = c
			}
		}
		sp.Attempt++
		return nil
	})
}

// prepareAttempt makes a plain task's attempt: its parallel items started,
// its leading prompt commands run, $RESULT references substituted (the
// task waits first for the children whose results they name) and $TURN
// references, an auto
// task's request wrapped for the planner, and a return task given the step
// before it (the same claude session, when there is one, else its result).
// began is called before the first of these that acts (starts children,
// runs prompt commands).
func prepareAttempt(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, began func()) (*agent.Attempt, error) {
	l := j.List
	a, err := j.NewAttempt(t, sp, "", "")
	if err != nil {
		return nil, err
	}
	if err := subagent.CheckScope(j, t, sp, a); err != nil { // a delegated child's permissions
		return nil, err
	}
	pl, err := chain.PlanOf(j.Scope, sp)
	if err != nil {
		return nil, err
	}
	ov, err := chain.Overrides(t)
	if err != nil {
		return nil, err
	}
	if len(ov.Parallel) > 0 || prompt.HasCommands(task.Prompt(t, sp)) {
		began()
	}
	if err := chain.StartParallel(ctx, j, t, ov); err != nil {
		return nil, err
	}
	prep, err := runLeading(ctx, j, t, sp, a.Cwd)
	if err != nil {
		return nil, err
	}
	if waitFor := chain.ResultWait(l, t, pl.Content); len(waitFor) > 0 {
		return nil, subagent.WaitForResults(ctx, j, t, sp, waitFor)
	}
	content, err := chain.SubstituteResults(l, t, pl.Content)
	if err == nil {
		content, err = chain.SubstituteTurns(l, t, sp.Attempt, content)
	}
	if err != nil {
		return nil, fmt.Errorf("prompt: %w", err)
	}
	if ov.Auto {
		content = chain.PlannerPrompt(content)
	}
	if sp.AnswerRequired && agent.IsModel(a.Profile) {
		content = strings.TrimRight(content, "\n") + "\n\n" + VoteFormat // its answer is voted on
	}
	if prev, _ := t.Metadata.Object("taskd").String("previous"); prev != "" {
		if session := sessionOf(l, prev); session != "" && agent.CanResume(a.Profile) {
			a.Resume = session
		} else if agent.IsModel(a.Profile) {
			content = chain.PreviousContext(l, prev) + "## This step\n\n" + content
		}
	}
	prep.script.Content = content
	prep.feedback = feedback(l, t, sp)
	prep.apply(a)
	if s := task.RecordOf(t).InterruptedSession; s != "" && a.ResumeInterrupted(s) {
		j.Log.Info("resuming the session of the interrupted attempt", "list", l.ID, "task", t.ID, "attempt", sp.Attempt, "session", s)
	}
	if g, ok := job.GrantOf(t); ok && a.Continue(g.Session, strings.TrimSpace(g.Prompt()+"\n\n"+personNote(t))) {
		// The session goes on where its calls were refused, told of the
		// person's note given with the answer, if any.
		j.Log.Info("continuing the session whose refused tool calls a person allowed", "list", l.ID, "task", t.ID, "attempt", sp.Attempt, "session", g.Session, "allowed", g.Tools)
	}
	return a, nil
}

// resumeAfterLimit resumes the session of a claude agent that a usage
// limit paused, telling it to carry on; any other agent runs again.
func resumeAfterLimit(t *taskfile.Task, a *agent.Attempt) {
	if session := job.ResumeSession(t); session != "" && agent.CanResume(a.Profile) {
		a.Resume, a.Fork = session, false
		a.Prompt = job.ResumeAfterLimit
	}
}

// sessionOf returns the agent session a task's last attempt reported.
func sessionOf(l *job.List, id string) string {
	t, err := l.Dir.Read(id)
	if err != nil {
		return ""
	}
	s, _ := task.RecordOf(t).Result.String("sessionId")
	return s
}

// afterAttempt records how a plain task's attempt ended and what follows
// from it: a success's work committed to the task's branch (when it has a
// git worktree), a waiting parent, an auto task's plan, an answer to vote
// on (asked for again, or of a person, when a model gave none:
// verdict.go), the next iteration of a loop, or — once the task has
// succeeded for good — its return chain and trailing follow-ups
// (ended.succeed).
func afterAttempt(ctx context.Context, j *job.Job, sp task.Spec, res agent.Result, out agent.Outcome) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	t, err := l.Dir.Current(id)
	if err != nil {
		return nil, err
	}
	if _, noted := t.Metadata.Object("taskd").Get("resolveNote"); noted {
		// A person's note was given to this attempt (feedback): it is used.
		if t, err = l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
			task.Meta(t).Delete("resolveNote")
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if len(task.Strings(task.RecordOf(t).Children, children.Returns)) > 0 && out == agent.Finished && res.Success {
		return endOfChain(ctx, j, sp, res, nil) // its chain is made: it ends with it
	}
	e := &ended{j: j, t: t, sp: sp, res: res}
	if out != agent.Finished || !res.Success || subagent.HasVerdict(j, sp, out) {
		return e.failed(ctx, out)
	}
	// The agent's work goes on its branch before anything that follows the
	// success: children, follow-ups and returns start from it.
	if err := j.CommitWorkOf(ctx, t, sp, res.Summary); job.Retryable(err) {
		return nil, err // the daemon stops: recovered from result.json
	} else if err != nil {
		res.Success, res.Error = false, err.Error()
		res.Summary = res.Error
		return subagent.Finish(ctx, j, sp, res, agent.NotStarted)
	}
	if len(children.Ungiven(l.Dir, t)) > 0 {
		// Its children's results come first, whether they have ended or
		// not: it waits, and is resumed with them once all have ended.
		return subagent.Finish(ctx, j, sp, res, out)
	}
	if ov, _ := chain.Overrides(t); ov.Auto {
		if planned, _ := children.Named(l.Dir, id, id+"-plan"); planned == "" {
			if err := chain.RunPlan(ctx, j, t, res); err != nil {
				res.Success, res.Error = false, err.Error()
				return subagent.Finish(ctx, j, sp, res, agent.NotStarted)
			}
			return subagent.Finish(ctx, j, sp, res, out) // waits for the plan
		}
	}
	if votes(t) {
		asked, ok := askVote(ctx, j, t, sp, res)
		switch {
		case asked.Out != agent.Finished:
			return subagent.Finish(ctx, j, sp, asked.Res, asked.Out)
		case !ok:
			return j.FinishUnjudged(ctx, sp, res, voteQuestion(asked))
		}
		e.res = asked.Res
		if !e.res.Success {
			return e.failed(ctx, out) // its verdict: it failed
		}
	}
	return e.succeed(ctx, func(lp *prompt.Loop) (int, bool, string, error) {
		return loopCheck(ctx, chain.Looping{Job: j, Task: t, Spec: sp, Loop: lp}, e.res)
	})
}

// failed records an attempt that did not succeed (or whose agent left a
// verdict of a subagent command), and the end of its loop when it fails.
func (e *ended) failed(ctx context.Context, out agent.Outcome) (*taskfile.Task, error) {
	j, sp, res := e.j, e.sp, e.res
	l, id := j.List, j.ID
	ft, err := subagent.Finish(ctx, j, sp, res, out)
	if ov, _ := chain.Overrides(e.t); ov.Loop != nil && (task.Of(ft) == task.Failed || task.Of(ft) == task.TimedOut) {
		l.Events.Append(eventlog.Event{Type: eventlog.LoopExited, List: l.ID, Task: id, Parent: sp.Parent, Attempt: sp.Attempt,
			Data: map[string]any{"exitReason": chain.LoopError, "error": res.Error}})
	}
	return ft, err
}

// An ended is a plain task's attempt that has ended: the job, the task as
// read after it, the attempt's spec and result.
type ended struct {
	j   *job.Job
	t   *taskfile.Task
	sp  task.Spec
	res agent.Result
}

// succeed records the attempt, which succeeded, once decide has said
// whether its loop goes on (decide's results are Looping.Check's; it is not
// asked of a task that does not loop): the next iteration; or — the task
// done for good — its return chain and trailing follow-ups, created before
// the success is written (so a parent never sees the task done while they
// are missing, and a restart creates them once) and recorded in the same
// write. A loop's judge that gave no verdict asks a person.
func (e *ended) succeed(ctx context.Context, decide func(*prompt.Loop) (iteration int, done bool, reason string, stopped error)) (*taskfile.Task, error) {
	j, t, sp, res := e.j, e.t, e.sp, e.res
	ov, _ := chain.Overrides(t)
	var onSuccess func(*task.Record)
	if ov.Loop != nil {
		iteration, done, reason, stopped := decide(ov.Loop)
		var unjudged *chain.JudgeError
		var noVerdict *chain.Unjudged
		switch {
		case errors.As(stopped, &noVerdict):
			return j.FinishUnjudged(ctx, sp, res, untilQuestion(noVerdict, ov.Loop))
		case errors.As(stopped, &unjudged):
			res.Success, res.Error = false, unjudged.Error()
			res.Summary = res.Error
			return subagent.Finish(ctx, j, sp, res, agent.Finished)
		case stopped != nil:
			// The condition was not checked: the iteration ends as the
			// stop says (interrupted: it runs again at the next start).
			res.Success = false
			res.Error = "the loop's condition was not checked: " + stopped.Error()
			res.Summary = res.Error
			return subagent.Finish(ctx, j, sp, res, agent.StoppedOutcome(stopped))
		case !done:
			return chain.ContinueLoop(ctx, j, sp, res, iteration)
		}
		onSuccess = func(r *task.Record) { r.LoopIteration, r.LoopExit = iteration, reason }
	}
	// Both are made before the success is written, each at most once,
	// however long a full disk keeps them from being written (Persist).
	if err := j.Persist(ctx, "the task's return chain is not made yet", sp.Parent, func(ctx context.Context) error {
		return chain.CreateReturns(ctx, j, t, ov)
	}); job.Retryable(err) {
		return nil, err // the daemon stops: recovered from result.json
	} else if err != nil {
		res.Success, res.Error = false, err.Error()
		return subagent.Finish(ctx, j, sp, res, agent.NotStarted)
	}
	if err := j.Persist(ctx, "the task's follow-up tasks are not made yet", sp.Parent, func(ctx context.Context) error {
		return createFollowUps(ctx, j, t)
	}); job.Retryable(err) {
		return nil, err
	} else if err != nil {
		res.Success, res.Error = false, err.Error()
		return subagent.Finish(ctx, j, sp, res, agent.NotStarted)
	}
	if len(ov.Return) > 0 {
		return endOfChain(ctx, j, sp, res, onSuccess)
	}
	return j.Finish(ctx, sp, res, agent.Finished, onSuccess)
}

// endOfChain records the end of a task whose agent succeeded and whose
// return chain is made: it waits while a step of the chain runs (with
// onSuccess, what its attempt decided, recorded), and then ends as the
// chain did — succeeded when every step did, else failed, naming the
// step. The chain and the task are one unit.
func endOfChain(ctx context.Context, j *job.Job, sp task.Spec, res agent.Result, onSuccess func(*task.Record)) (*taskfile.Task, error) {
	t, err := j.List.Dir.Read(j.ID)
	if err != nil {
		return nil, err
	}
	failure, ended := chain.ChainOutcome(j.List, t)
	switch {
	case ended && failure != "":
		res.Success, res.Error = false, failure
		return j.Finish(ctx, sp, res, agent.NotStarted, nil)
	case ended:
		loop := onSuccess
		onSuccess = func(r *task.Record) {
			if loop != nil {
				loop(r)
			}
			r.ReturnsDone = true
		}
	}
	return j.Finish(ctx, sp, res, agent.Finished, onSuccess) // waits while the chain runs
}

// loopCheck is Looping.Check, tried again (the task held meanwhile)
// while the run folder of the condition's agent cannot be written: the
// iteration's result is kept, never lost to a re-run.
func loopCheck(ctx context.Context, lg chain.Looping, res agent.Result) (iteration int, done bool, reason string, stopped error) {
	j, sp := lg.Job, lg.Spec
	for n := 1; ; n++ {
		iteration, done, reason, stopped = lg.Check(ctx, res)
		if !job.Retryable(stopped) || ctx.Err() != nil {
			if n > 1 {
				j.Unhold()
			}
			return
		}
		wait := job.HoldBackoff(n)
		j.Hold("the loop's condition cannot be checked yet: "+stopped.Error(), j.Now().Add(wait), sp.Parent)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// apply gives the attempt the processed prompt: prompt.md with the injected
// round trips, the content alone as an exec agent's script, and the
// transcript in the run folder ($TASKD_TRANSCRIPT).
func (p *prepared) apply(a *agent.Attempt) {
	a.Prompt = p.render()
	if !agent.IsModel(a.Profile) {
		a.Script = p.script.Content
	}
	if len(p.results) > 0 {
		a.Env = map[string]string{"TASKD_RESULTS": strings.Join(p.results, "\n\n")}
	}
	if p.feedback != "" {
		if a.Env == nil {
			a.Env = map[string]string{}
		}
		a.Env["TASKD_FEEDBACK"] = p.feedback
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

// errNoFlow is returned for workflow operations while no workflow engine is
// configured.
var errNoFlow = errors.New("workflows are not available")
