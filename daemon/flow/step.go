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

// runStep runs the current workflow step: its node's command with the exec
// profile (taskd's extension: exit status 0 passes) or its agent with a
// prompt built from the step. Each step gets its own run folder. A step
// whose run folder could not be written (a full disk) does not run: the
// error says why, and the task is held.
func (f *flowRun) runStep(ctx context.Context, resp *navigator.Response) (agent.Result, agent.Outcome, error) {
	f.run++
	sp := f.specFor(f.run)
	step := resp.CurrentStep
	wf, _, _ := f.set.Lookup(workflowType(f.t))
	var node *navigator.Node
	if wf != nil {
		node = wf.Node(step)
	}
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
			}
		}
	}
	f.resume = ""
	if err != nil {
		return agent.Result{Error: err.Error(), Summary: err.Error(), ExitCode: -1}, agent.NotStarted, nil
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
		return res, out, a.Stopped
	}
	if node != nil && node.Command != "" && out == agent.Finished {
		res.Success = res.ExitCode == 0 // a command step passes on exit status 0, whatever it prints
	}
	result := "failed"
	if res.Success && out == agent.Finished {
		result = "passed"
	}
	f.l.Events.Append(eventlog.Event{Type: eventlog.StepFinished, List: f.l.ID, Task: f.id, Parent: f.sp.Parent, Step: step, Attempt: f.run,
		Data: map[string]any{"result": result, "summary": res.Summary, "exitCode": res.ExitCode, "durationMs": res.DurationMs}})
	if out == agent.TimedOut {
		out = agent.Finished // a step that timed out failed; the workflow decides what follows
	}
	return res, out, nil
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
	b.WriteString("## Your answer\n\nEnd your answer with one line of JSON saying how the step went, for example:\n\n")
	b.WriteString(`{"success": true, "summary": "one sentence on what you did"}` + "\n\n")
	b.WriteString(`Answer "success": false when the step's goal was not met — a review you would not approve, tests that fail, a fix that does not work — and say why in the summary. `)
	b.WriteString(`Add "results" for a path or short text the next steps should see.` + "\n")
	return b.String()
}
