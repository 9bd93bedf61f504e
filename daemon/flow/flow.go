// Package flow walks a task through its workflow graph, as the flow
// plugin's /flow:run does: navigate (package navigator), run the step's
// agent or command, advance with passed or failed (a model's verdict,
// asked for again when its answer has none, else a person's), repeat; fork branches
// as child tasks and join them; stop at human steps and at the loop guard.
// Every advance is one locked write of the task file, so the file always
// says where the task is. docs/workflows.md is the manual.
package flow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
	"github.com/taskd/taskd/workflows"
)

// Loop guards of the /flow:run execution loop (docs/workflows.md): after this many
// steps a workflow pauses for a person, and at the hard limit it stops.
const (
	softGuard = 25
	hardGuard = 50
)

// A flowRun walks one task through its workflow: navigate, run the step's
// agent or command, advance with passed or failed, repeat — the execution
// loop of /flow:run, performed by the daemon. Every advance is one locked
// write of the task file: the navigator's write-through plus taskd's step
// trace, so the file always says where the task is.
type flowRun struct {
	j   *job.Job
	l   *job.List
	id  string
	sp  task.Spec
	set *workflows.Set
	cwd string
	t   *taskfile.Task // the task as last written
	run int            // the last run folder number used
	// resume is the session of a step a usage limit paused, which the
	// step's agent resumes (claude).
	resume string
}

func newFlow(j *job.Job, t *taskfile.Task, sp task.Spec) *flowRun {
	l := j.List
	cwd, err := j.Cwd(sp.Cwd)
	if err != nil {
		cwd = ""
	}
	f := &flowRun{j: j, l: l, id: t.ID, sp: sp, set: j.Catalog.Workflows(l.Dir.Path()), cwd: cwd, t: t}
	f.run = max(sp.Attempt, lastRunDir(l, t.ID))
	return f
}

// lastRunDir returns the highest run folder number of task id.
func lastRunDir(l *job.List, id string) int {
	entries, _ := fsroot.ReadDir(l.Dir.Path(), filepath.Dir(l.RunDir(id, 0)))
	n := 0
	for _, e := range entries {
		if v, err := strconv.Atoi(e.Name()); err == nil && v > n {
			n = v
		}
	}
	return n
}

// runFlow runs a claimed workflow task until it ends, waits (fork, human) or
// is stopped.
func Run(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec) (*taskfile.Task, error) {
	f := newFlow(j, t, sp)
	if sp.State == task.Paused {
		f.resume = job.ResumeSession(t)
	}
	j.RecordStart(t, sp, eventlog.Event{Step: currentStep(t), Data: map[string]any{"workflow": workflowType(t)}})
	return f.loop(ctx, "", afterNothing)
}

func currentStep(t *taskfile.Task) string  { s, _ := t.Metadata.String("currentStep"); return s }
func workflowType(t *taskfile.Task) string { s, _ := t.Metadata.String("workflowType"); return s }

// loop is the execution loop. result, when set, is first applied to the
// current step (a resumed HITL answer, a fork's verdict, a recovered
// result); what also says is cleared in that same write.
func (f *flowRun) loop(ctx context.Context, result string, also after) (*taskfile.Task, error) {
	var prev *navigator.Response // the advance that led here, for HITL reasons
	for {
		if result != "" {
			resp, err := f.advance(ctx, result, also)
			also = afterNothing
			var nm *navigator.NoMatchError
			if errors.As(err, &nm) {
				opts := answers(f.workflow(), nm.CurrentStep)
				return f.needsHuman(ctx, "workflow", fmt.Sprintf("step %s has no edge for the result %q; %s, or edit the workflow", nm.CurrentStep, result, askFor(opts)), opts)
			}
			if err != nil {
				return nil, err
			}
			prev, result = resp, ""
		}
		resp, err := f.current(ctx)
		if err != nil {
			return f.fail(ctx, err.Error())
		}
		switch {
		case resp.Action == navigator.ActionFork:
			return f.fork(ctx, resp)
		case resp.Action == navigator.ActionJoin:
			return f.branchDone(ctx)
		case resp.Terminal == navigator.TerminalSuccess:
			return f.complete(ctx, resp)
		case resp.Terminal == navigator.TerminalHITL:
			opts := answers(f.workflow(), resp.CurrentStep)
			return f.needsHuman(ctx, "workflow", f.hitlReason(resp, prev)+"; "+askFor(opts), opts)
		case resp.Terminal == navigator.TerminalFailure:
			return f.fail(ctx, fmt.Sprintf("the workflow ended at %s, a failure end", resp.CurrentStep))
		case resp.Terminal == navigator.TerminalStart:
			result = "passed" // a start node reached by an edge: nothing to do there
			continue
		}
		if t, stop, err := f.guard(ctx); stop || err != nil {
			return t, err
		}
		end, err := f.runStep(ctx, resp)
		if err != nil {
			return nil, err // held: the task stays running; recovery runs the step later
		}
		if result = resultOf(end); result == "" {
			return f.ended(ctx, resp.CurrentStep, end)
		}
	}
}

// resultOf is the result a step's run gives the workflow, passed or
// failed; "" when the run ended otherwise (ended records how).
func resultOf(end stepEnd) string {
	res, out := end.res, end.out
	switch {
	case out == agent.Interrupted, out == agent.Cancelled, out == agent.NotStarted, out == agent.Paused, out == agent.OverBudget,
		out == agent.Finished && len(res.Denials) > 0, // a person is asked, or it fails (metadata.taskd.onDenied)
		end.unjudged != nil:                           // no verdict: a person gives it
		return ""
	case res.Success:
		return "passed"
	}
	return "failed"
}

// ended records a step's run that gave the workflow no result: a stop,
// refused tool calls (job.Finish), or an answer without a verdict, which a
// person is asked for.
func (f *flowRun) ended(ctx context.Context, step string, end stepEnd) (*taskfile.Task, error) {
	if a := end.unjudged; a != nil {
		opts := answers(f.workflow(), step)
		who := fmt.Sprintf("the agent of step %s", step)
		if n := f.node(step); n != nil && n.Name != "" {
			who = fmt.Sprintf("the agent of step %q (%s)", n.Name, step)
		}
		return f.ask(ctx, job.HITLVerdict, job.NoVerdict(who, *a)+"; "+askFor(opts), opts, map[string]any{"answer": a.Said, "run": f.run})
	}
	return f.j.Finish(ctx, f.specFor(f.run), end.res, end.out, nil)
}

// workflow returns the task's workflow definition, or nil.
func (f *flowRun) workflow() *navigator.Workflow {
	if f.set == nil {
		return nil
	}
	wf, _, _ := f.set.Lookup(workflowType(f.t))
	return wf
}

// specFor is the task's spec with attempt n, for finish.
func (f *flowRun) specFor(n int) task.Spec {
	sp := f.sp
	sp.Attempt = n
	return sp
}

// current navigates without a result: the step the task is at. A task that
// has no step yet is started (its first step recorded, as flow's
// orchestrator does when it creates the task).
func (f *flowRun) current(ctx context.Context) (*navigator.Response, error) {
	in := navigator.Input{ProjectRoot: f.cwd}
	nt := NavigatorTask(f.t, f.id)
	resp, _, err := navigator.Navigate(f.set, nt, in)
	if err != nil || hasCurrentStep(nt) {
		return resp, err
	}
	wt := navigator.StartWriteThrough(nt, resp, "")
	t, err := f.l.Dir.Update(ctx, f.id, func(t *taskfile.Task) error {
		ApplyWriteThrough(t, wt)
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.t = t
	return resp, nil
}

// advance applies result to the current step in one write: the navigator's
// write-through, the step trace and the iteration count.
func (f *flowRun) advance(ctx context.Context, result string, also after) (*navigator.Response, error) {
	var resp *navigator.Response
	var t *taskfile.Task
	// The step ran: its result is written however long that takes
	// (job.Persist), never lost to a step run again.
	err := f.j.Persist(ctx, fmt.Sprintf("the result of step %s is not recorded yet (it is kept until it is)", currentStep(f.t)), f.sp.Parent, func(ctx context.Context) (err error) {
		t, err = f.l.Dir.Update(ctx, f.id, func(t *taskfile.Task) error { return f.apply(t, result, also, &resp) })
		return err
	})
	if err != nil {
		return nil, err
	}
	if also != afterAnswer {
		f.j.SettleResult(f.run)
	}
	f.t = t
	return resp, nil
}

// apply applies result to the current step of t, the task file as read
// under the lock: the navigator's write-through, what also clears, the
// step trace and the iteration count; resp is set to the navigator's
// answer.
func (f *flowRun) apply(t *taskfile.Task, result string, also after, resp **navigator.Response) error {
	step := currentStep(t)
	r, wt, err := navigator.Navigate(f.set, NavigatorTask(t, f.id), navigator.Input{Result: result, ProjectRoot: f.cwd})
	if err != nil {
		return err
	}
	ApplyWriteThrough(t, wt)
	m := task.Meta(t)
	rec := task.RecordOf(t)
	var entry *taskfile.Object
	if also == afterAnswer {
		entry = personEntry(step, result, string(r.Action), takeNote(m))
		if h := rec.Hold; h != nil {
			if kind, _ := h.String("kind"); kind == job.HITLVerdict {
				run, _ := h.Int("run")
				entry.Set("attempt", run) // the step ran: a person gave its verdict
			}
		}
	} else {
		entry = taskfile.NewObject()
		entry.Set("step", step)
		entry.Set("result", result)
		entry.Set("action", string(r.Action))
		entry.Set("attempt", f.run)
	}
	also.apply(t, &rec)
	rec.Grant = nil // given to the step that ran
	rec.Attempt = f.run
	rec.Iteration++
	appendTrace(&rec, entry)
	task.Store(t, rec)
	*resp = r
	return nil
}

// guard applies the loop guards before a step runs: at the soft limit the
// task pauses for a person (continue, abort or investigate); at the hard
// limit it stops, left in_progress as /flow:run leaves it.
func (f *flowRun) guard(ctx context.Context) (*taskfile.Task, bool, error) {
	rec := task.RecordOf(f.t)
	n, next := rec.Iteration, rec.GuardAt
	if next == 0 {
		next = softGuard
	}
	trace := traceLine(f.t, 8)
	switch {
	case n >= hardGuard:
		f.l.Events.Append(eventlog.Event{Type: eventlog.GuardStopped, List: f.l.ID, Task: f.id, Step: currentStep(f.t),
			Data: map[string]any{"iterations": n, "trace": trace}})
		t, err := f.l.Dir.Update(ctx, f.id, func(t *taskfile.Task) error {
			rec := task.RecordOf(t)
			rec.Error = fmt.Sprintf("stopped by the loop guard after %d steps; the workflow may cycle (%s). Inspect metadata.taskd.stepTrace, then run it again with taskd retry", n, trace)
			_, err := task.Apply(t, task.Stop, rec)
			return err
		})
		return t, true, err
	case n >= next:
		f.l.Events.Append(eventlog.Event{Type: eventlog.GuardWarning, List: f.l.ID, Task: f.id, Step: currentStep(f.t),
			Data: map[string]any{"iterations": n, "trace": trace}})
		t, err := f.needsHuman(ctx, "guard", fmt.Sprintf("loop guard: %d steps so far (%s); continue for %d more, abort, or investigate", n, trace, softGuard), []string{"continue", "abort", "investigate"})
		return t, true, err
	}
	return nil, false, nil
}

// lastReport is what failed step e last reported, as its run folder keeps
// it (its summary, else its error), for the person asked: " (it
// reported: …)", or "" when it left none.
func (f *flowRun) lastReport(e traceEntry) string {
	if e.attempt <= 0 {
		return ""
	}
	res, ok := agent.ReadResult(f.l.RunDir(f.id, e.attempt))
	said := strings.Join(strings.Fields(cmp.Or(res.Summary, res.Error)), " ")
	if !ok || said == "" {
		return ""
	}
	return " (it reported: " + agent.Truncate(said, 300) + ")"
}

// hitlReason says why the workflow reached a human step.
func (f *flowRun) hitlReason(resp *navigator.Response, prev *navigator.Response) string {
	var why string
	last := lastTrace(f.t)
	if prev != nil && prev.Action == navigator.ActionEscalate || last.action == "escalate" {
		why = fmt.Sprintf("max retries exceeded at %s", last.step)
	} else if last.result == "failed" {
		why = fmt.Sprintf("%s failed", last.step)
	}
	if why != "" && last.result == "failed" {
		why += f.lastReport(last)
	}
	if wf := f.workflow(); wf != nil {
		if n := wf.Node(resp.CurrentStep); n != nil {
			what := n.Name
			if n.Description != "" {
				what += ": " + n.Description
			}
			if why == "" {
				return what
			}
			return why + " — " + what
		}
	}
	if why == "" {
		why = "the workflow asks for a person at " + resp.CurrentStep
	}
	return why
}

// complete records a workflow that reached a success end, its work first
// committed to its branch when it runs in a git worktree. An end that
// leads on (a stage boundary, reached without autonomy) is recorded in
// metadata.taskd.boundary: the answer continue walks on from there.
func (f *flowRun) complete(ctx context.Context, resp *navigator.Response) (*taskfile.Task, error) {
	if err := f.commitWork(ctx); job.Retryable(err) {
		return nil, err // the daemon stops: the task stays running, recovered later
	} else if err != nil {
		return f.fail(ctx, err.Error())
	}
	next := stageNext(f.workflow(), resp.CurrentStep)
	t, err := f.l.Dir.Update(ctx, f.id, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		rec.FinishedAt, rec.Error = time.Now(), ""
		rec.Boundary = nil
		if next != "" {
			b := taskfile.NewObject()
			b.Set("step", resp.CurrentStep)
			b.Set("next", next)
			b.Set("options", []string{Continue})
			rec.Boundary = b
		}
		_, err := task.End(t, task.Succeed, rec)
		return err
	})
	if err != nil {
		return nil, err // no event for what the file does not say
	}
	f.l.Events.Append(eventlog.Event{Type: eventlog.TaskSucceeded, List: f.l.ID, Task: f.id, Parent: f.sp.Parent, Step: resp.CurrentStep,
		Data: map[string]any{"workflow": workflowType(f.t), "steps": traceLine(f.t, 20)}})
	return t, err
}

// fail records a workflow that cannot go on.
func (f *flowRun) fail(ctx context.Context, msg string) (*taskfile.Task, error) {
	t, err := f.l.Dir.Update(ctx, f.id, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		rec.Error, rec.FinishedAt = msg, time.Now()
		_, err := task.End(t, task.Fail, rec)
		return err
	})
	if err != nil {
		return nil, err
	}
	f.l.Events.Append(eventlog.Event{Type: eventlog.TaskFailed, List: f.l.ID, Task: f.id, Parent: f.sp.Parent, Step: currentStep(f.t),
		Data: map[string]any{"error": msg}})
	return t, err
}

// needsHuman pauses the task for a person: status pending, state
// needs_human, and metadata.taskd.hitl saying why, where, and which answers
// metadata.taskd.resolve accepts.
func (f *flowRun) needsHuman(ctx context.Context, kind, reason string, options []string) (*taskfile.Task, error) {
	return f.ask(ctx, kind, reason, options, nil)
}

// ask is needsHuman with more fields of metadata.taskd.hitl.
func (f *flowRun) ask(ctx context.Context, kind, reason string, options []string, more map[string]any) (*taskfile.Task, error) {
	step := currentStep(f.t)
	trace := traceLine(f.t, 8)
	t, err := f.l.Dir.Update(ctx, f.id, func(t *taskfile.Task) error {
		h := taskfile.NewObject()
		h.Set("kind", kind)
		h.Set("reason", reason)
		h.Set("step", step)
		h.Set("options", options)
		h.Set("trace", trace)
		for _, k := range sortedKeys(more) {
			h.Set(k, more[k])
		}
		rec := task.RecordOf(t)
		rec.Grant = nil // given to the step that ran, if any
		rec.Hold = h
		rec.FinishedAt = time.Now() // the walk stops here: it waits since now
		if _, err := task.End(t, task.AskPerson, rec); err != nil {
			return err
		}
		task.Meta(t).Delete("resolve")
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.l.Events.Append(eventlog.Event{Type: eventlog.TaskNeedsHuman, List: f.l.ID, Task: f.id, Parent: f.sp.Parent, Step: step,
		Data: map[string]any{"reason": reason, "options": options, "kind": kind}})
	return t, err
}

// after says what the write that applies a result to the current step
// also clears.
type after int

const (
	afterNothing after = iota
	afterJoin          // a fork's join: forkState and the children it waited for
	afterAnswer        // a person's answer: resolve and hitl
)

func (a after) apply(t *taskfile.Task, rec *task.Record) {
	switch a {
	case afterJoin:
		t.Metadata.Delete("forkState")
		rec.Children = nil
	case afterAnswer:
		m := task.Meta(t)
		m.Delete("resolve")
		m.Delete("resolveNote")
		rec.Hold, rec.Boundary = nil, nil
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// commitWork commits the workflow's work to its branch, when it runs in
// a git worktree (job.CommitWork), with the summary of the last step that
// ran.
func (f *flowRun) commitWork(ctx context.Context) error {
	summary := ""
	if f.run > 0 {
		if res, ok := agent.ReadResult(f.l.RunDir(f.id, f.run)); ok {
			summary = res.Summary
		}
	}
	return f.j.CommitWork(ctx, f.sp, summary)
}
