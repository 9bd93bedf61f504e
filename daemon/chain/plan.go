package chain

import (
	"context"
	"fmt"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// PlannerPrompt is what an auto task's agent is asked: to write the workflow
// for the user's request in the inline block syntax.
func PlannerPrompt(request string) string {
	var b strings.Builder
	b.WriteString(`You plan work for a task runner. Turn the request below into one workflow, written as a single /subtask line in this syntax:

    /subtask {key:value && key:value} PROMPT

Keys (all optional, in any order, separated by &&):

- model:ID — the model to use
- agent:NAME — the agent or profile to run it
- loop:N — run it up to N times; with until:CONDITION, a reviewer checks the condition after each run and the loop stops once it holds (until alone means at most 10 runs)
- return:A || B || C — follow-up prompts run in order after it succeeds; an item may be a /subtask {…} line of its own, whose returns run before the chain goes on
- parallel:A || B — prompts run at the same time as it, as separate tasks
- as:NAME — name its result, so later prompts can use $RESULT[NAME]

Quote a value with "…" if it contains }, && or ||.

Examples:

    /subtask {return:review the change || run the tests} implement the login form
    /subtask {loop:5 && until:all tests pass} fix the failing tests
    /subtask {parallel:research option A || research option B && return:compare the options and pick one} choose a storage engine

First think about the request; then give the workflow inside one block, exactly like this:

<subtask2 auto="true">
/subtask {…} …
</subtask2>

Only the first line of the block may start with a slash. Do not do the work yourself.

## The request

`)
	b.WriteString(strings.TrimSpace(request))
	b.WriteString("\n")
	return b.String()
}

// RunPlan reads the workflow an auto task's planner wrote and starts it as
// the task's child, run by the task's worker (Worker) unless the workflow
// names its agent; the task then waits for it (and for the returns it
// adds) and completes when they have ended. A missing or invalid block, or
// a workflow outside the limits (unknown agents, a loop nothing can
// judge), fails the task with the reason; the planner's output stays in
// its run folder.
func RunPlan(ctx context.Context, j *job.Job, t *taskfile.Task, res agent.Result) error {
	l := j.List
	script, err := prompt.ParseAutoOutput(res.Output, prompt.ParseOptions{Commands: j.Catalog.Commands(l.Dir.Path()).Has})
	if err != nil {
		return fmt.Errorf("the planner's output holds no usable workflow: %w", err)
	}
	var ov prompt.Overrides
	for _, st := range script.Leading {
		if s, ok := st.Cmd.(*prompt.Subtask); ok {
			ov = s.Overrides
		}
	}
	agents := []string{ov.Agent}
	items := append(append([]string{}, ov.Return...), ov.Parallel...)
	for _, item := range items {
		if sub, err := j.ParsePrompt(item); err == nil {
			for _, st := range sub.Leading {
				if s, ok := st.Cmd.(*prompt.Subtask); ok {
					agents = append(agents, s.Overrides.Agent)
				}
			}
		}
	}
	for _, a := range agents {
		if a == "" {
			continue
		}
		if _, err := j.Config.ResolveAgent(a, true); err != nil {
			return fmt.Errorf("the planner's workflow names an agent taskd cannot run: %w", err)
		}
	}
	worker := Worker(j, t)
	if _, err := j.Config.ResolveAgent(worker, true); err != nil {
		return fmt.Errorf("the worker that runs the planned steps: %w", err)
	}
	_, owner := task.Addressed(t)
	if err := CheckLoop(j.Config, owner, ov.Loop, firstOf(ov.Agent, worker)); err != nil {
		return fmt.Errorf("the planner's workflow: %w", err)
	}
	name := t.ID + "-plan"
	if _, err := children.Named(l.Dir, t.ID, name); err == nil {
		return nil
	}
	_, err = children.Push(ctx, j.Config, l.Dir, t.ID, children.PushOptions{Name: name, Prompt: script.String(), Start: true,
		Extra: map[string]any{"parallelItem": true}, Inherit: map[string]any{"agent": worker}})
	return err
}

// Worker is the agent that runs the steps of task t's planned workflow
// that name none: the task's metadata.taskd.worker, else the agent name
// "worker" when the configuration maps it (or has a profile of that
// name), else the configuration's defaultAgent. Never the planner's own
// agent, unless one of those names it.
func Worker(j *job.Job, t *taskfile.Task) string {
	if w, _ := t.Metadata.Object("taskd").String("worker"); w != "" {
		return w
	}
	cfg := j.Config
	_, mapped := cfg.Agents["worker"]
	_, profile := cfg.Profiles["worker"]
	if mapped || profile {
		return "worker"
	}
	return cfg.DefaultAgent
}
