package flow

import (
	"context"
	"fmt"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/navigator"
)

// A stepEnd is how a step's run ended: its result and outcome, and, when
// its model's answer carries no verdict (not even asked again), what was
// asked.
type stepEnd struct {
	res      agent.Result
	out      agent.Outcome
	unjudged *job.Asked
}

// runStep runs the current workflow step: its node's command with the exec
// profile (taskd's extension: exit status 0 passes) or its agent with a
// prompt built from the step, whose answer must carry the step's verdict
// when the step decides the way on (judge). Each step gets its own run
// folder. A step whose run folder could not be written (a full disk) does
// not run: the error says why, and the task is held.
func (f *flowRun) runStep(ctx context.Context, resp *navigator.Response) (stepEnd, error) {
	f.run++
	sp := f.specFor(f.run)
	step := resp.CurrentStep
	node := f.node(step)
	var a *agent.Attempt
	var err error
	if node != nil && node.Command != "" {
		a, err = f.j.NewAttempt(f.t, sp, "", step)
		if err == nil {
			a.Profile, err = f.j.Config.ResolveAgent("exec", true)
		}
		if err == nil {
			a.Prompt, a.Script = node.Command, node.Command
		}
	} else {
		a, err = f.j.NewAttempt(f.t, sp, resp.Subagent, step)
		if err == nil {
			a.Prompt = stepPrompt(f, resp)
			if f.resume != "" && a.Profile.Flags == "claude" {
				a.Resume, a.Prompt = f.resume, job.ResumeAfterLimit // the step a usage limit paused
			} else if g, ok := job.GrantOf(f.t); ok {
				a.Continue(g.Session, g.Prompt()) // the step whose refused calls a person allowed
			}
		}
	}
	f.resume = ""
	if err != nil {
		return stepEnd{res: agent.Result{Error: err.Error(), Summary: err.Error(), ExitCode: -1}, out: agent.NotStarted}, nil
	}
	data := map[string]any{"profile": a.Profile.Name}
	if resp.Subagent != "" {
		data["agent"] = resp.Subagent
	}
	if node != nil && node.Command != "" {
		data["command"] = node.Command
	}
	f.l.Events.Append(eventlog.Event{Type: eventlog.StepStarted, List: f.l.ID, Task: f.id, Parent: f.sp.Parent, Step: step, Attempt: f.run, Data: data})
	res, out := f.j.RunAgent(ctx, a)
	if job.Retryable(a.Stopped) {
		return stepEnd{res: res, out: out}, a.Stopped
	}
	if node != nil && node.Command != "" && out == agent.Finished {
		res.Success = res.ExitCode == 0 // a command step passes on exit status 0, whatever it prints
	}
	end := stepEnd{res: res, out: out}
	if out == agent.Finished {
		end = f.judge(ctx, resp, a, res)
		if job.Retryable(a.Stopped) {
			return end, a.Stopped
		}
	}
	result := "failed"
	switch {
	case end.unjudged != nil:
		result = "unjudged"
	case end.res.Success && end.out == agent.Finished:
		result = "passed"
	}
	f.l.Events.Append(eventlog.Event{Type: eventlog.StepFinished, List: f.l.ID, Task: f.id, Parent: f.sp.Parent, Step: step, Attempt: f.run,
		Data: map[string]any{"result": result, "summary": end.res.Summary, "exitCode": end.res.ExitCode, "durationMs": end.res.DurationMs}})
	if end.out == agent.TimedOut {
		end.out = agent.Finished // a step that timed out failed; the workflow decides what follows
	}
	return end, nil
}

// node returns the workflow's node step, or nil.
func (f *flowRun) node(step string) *navigator.Node {
	if wf := f.workflow(); wf != nil {
		return wf.Node(step)
	}
	return nil
}

// stepVerdict is what a step that decides the way on needs of its model's
// answer: the result object (its last line, as the prompt asks).
var stepVerdict = job.Verdict{
	Has:   func(r agent.Result) bool { return agent.HasReport(r.Output) },
	Again: AskStepAgain,
}

// AskStepAgain is what a step's agent is asked, in its session, when its
// answer has no verdict line.
const AskStepAgain = `Your answer has no verdict line, and this step's result decides where the workflow goes. Reply with only that line, one line of JSON: {"success": true, "summary": "…"} if the step's goal was met, or {"success": false, "summary": "why not"} if it was not (a review you would not approve, tests that fail, a fix that does not work).`

// judge makes sure the answer res of the agent that ran the current step
// (attempt a; nil after a restart, when it is made again) carries the
// step's verdict,
// when the step's result decides the way on and its agent is a model that
// finished its answer: if not, it is asked again (job.AskAgain), and an
// answer still without one is unjudged. A command step, a failed run
// (the agent's error, its exit status, refused tool calls) and a step whose
// edges go one way whatever its result are decided as they are.
func (f *flowRun) judge(ctx context.Context, resp *navigator.Response, a *agent.Attempt, res agent.Result) stepEnd {
	end := stepEnd{res: res, out: agent.Finished}
	step := resp.CurrentStep
	node := f.node(step)
	if node == nil || node.Command != "" || len(res.Denials) > 0 || res.Error != "" || !decides(f.workflow(), step) {
		return end
	}
	if a == nil {
		var err error
		if a, err = f.j.NewAttempt(f.t, f.specFor(f.run), resp.Subagent, step); err != nil {
			f.j.Log.Warn("the step's agent cannot be asked for its verdict", "list", f.l.ID, "task", f.id, "step", step, "err", err)
			asked := job.NotAsked(res)
			return stepEnd{res: res, out: agent.Finished, unjudged: &asked}
		}
	}
	asked := f.j.AskAgain(ctx, a, res, stepVerdict)
	end.res, end.out = asked.Res, asked.Out
	if !asked.Verdict && asked.Out == agent.Finished {
		end.unjudged = &asked
	}
	return end
}

// decides reports whether the result of step decides where workflow wf
// goes: an edge leaves it for passed or for failed, or its edge enters a
// join (the result is the branch's verdict).
func decides(wf *navigator.Workflow, step string) bool {
	if wf == nil {
		return true
	}
	for _, e := range wf.Outgoing(step) {
		if e.On != "" {
			return true
		}
		if n := wf.Node(e.To); n != nil && n.Type == navigator.TypeJoin {
			return true
		}
	}
	return false
}

// stepPrompt is what the agent of a workflow step is asked: the task, the
// step and its guidance, what happened before this attempt (the report of
// a failed step that led here, a person's directions: feedback.go), the
// files to read first, and the answer format the daemon turns into passed
// or failed.
func stepPrompt(f *flowRun, resp *navigator.Response) string {
	var b strings.Builder
	tf, _ := f.t.Metadata.String("userDescription")
	if tf == "" {
		tf = f.t.Subject
	}
	wf := workflowType(f.t)
	fmt.Fprintf(&b, "You are carrying out one step of the %q workflow for task #%s.\n\n", wf, f.id)
	fmt.Fprintf(&b, "## Task\n\n%s\n\n", strings.TrimSpace(tf))
	if si := resp.StepInstructions; si != nil {
		fmt.Fprintf(&b, "## Step: %s\n\n", si.Name)
		if si.Description != "" {
			fmt.Fprintf(&b, "%s\n\n", si.Description)
		}
		if si.Guidance != "" {
			fmt.Fprintf(&b, "%s\n\n", si.Guidance)
		}
	}
	b.WriteString(f.feedback(resp.CurrentStep))
	if i := strings.Index(resp.OrchestratorInstructions, "## Context"); i >= 0 {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(resp.OrchestratorInstructions[i:]))
	}
	b.WriteString("## Your answer\n\nEnd your answer with one line of JSON, your verdict on the step, for example:\n\n")
	b.WriteString(`{"success": true, "summary": "one sentence on what you did"}` + "\n\n")
	b.WriteString(`Answer "success": false when the step's goal was not met — a review you would not approve, tests that fail, a fix that does not work — and say why in the summary. `)
	b.WriteString(`Add "results" for a path or short text the next steps should see.`)
	if decides(f.workflow(), resp.CurrentStep) {
		b.WriteString(" The workflow goes on by this line: an answer without it is asked for it again, and then a person decides.")
	}
	b.WriteString("\n")
	return b.String()
}
