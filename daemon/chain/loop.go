package chain

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Why a loop ended (metadata.taskd.loopExit).
const (
	loopSatisfied  = "satisfied"   // the until condition held (judge or command)
	loopMaxReached = "max_reached" // it ran loop.max times
	LoopError      = "error"       // an iteration failed
)

// breakVerdict matches a judge's answer that the condition holds:
// <subtask2 loop=break/>, case-insensitive, quotes and the slash optional.
var breakVerdict = regexp.MustCompile(`(?i)<subtask2\s+loop\s*=\s*["']?break["']?\s*/?\s*>`)

// LoopCheck decides after a successful iteration whether a looping task
// runs again. An iteration is an attempt of the task (its own run folder);
// without a condition the task runs exactly loop.max times; with until, a
// read-only judge decides after each iteration, and the loop ends only on
// its explicit break verdict; with untilCommand, the command's exit status 0
// ends it. It returns the iteration number, whether the loop has ended and
// why; or, if the condition's agent was stopped before it could tell (the
// daemon stops, the task is cancelled), why it was stopped, and nothing
// is decided.
func LoopCheck(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, lp *prompt.Loop, res agent.Result) (iteration int, done bool, reason string, stopped error) {
	l := j.List
	n, _ := t.Metadata.Object("taskd").Int("loopIteration")
	iteration = int(n) + 1
	satisfied := false
	by := "count"
	switch {
	case lp.UntilCommand != "":
		by = "command"
		satisfied, stopped = untilCommand(ctx, j, t, sp, lp.UntilCommand)
	case lp.Until != "":
		by = "judge"
		satisfied, stopped = judge(ctx, j, t, sp, lp, iteration, res)
	}
	if stopped != nil {
		return iteration, false, "", stopped
	}
	verdict := "continue"
	switch {
	case satisfied:
		done, reason, verdict = true, loopSatisfied, "break"
	case iteration >= lp.Max:
		done, reason = true, loopMaxReached
	}
	l.Events.Append(eventlog.Event{Type: eventlog.LoopIteration, List: l.ID, Task: t.ID, Parent: sp.Parent, Attempt: sp.Attempt,
		Data: map[string]any{"iteration": iteration, "max": lp.Max, "verdict": verdict, "by": by}})
	if done {
		l.Events.Append(eventlog.Event{Type: eventlog.LoopExited, List: l.ID, Task: t.ID, Parent: sp.Parent, Attempt: sp.Attempt,
			Data: map[string]any{"exitReason": reason, "iterations": iteration}})
	}
	return iteration, done, reason, nil
}

// untilCommand runs a loop's condition command with the exec profile in the
// task's working directory, in the iteration's run folder (until/).
func untilCommand(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, command string) (satisfied bool, stopped error) {
	l := j.List
	a, err := j.NewAttempt(t, sp, "", "")
	if err == nil {
		a.Profile, err = j.Config.ResolveAgent("exec", true)
	}
	if err != nil {
		j.Log.Warn("loop condition command", "list", l.ID, "task", t.ID, "err", err)
		return false, nil
	}
	a.Sub, a.Prompt, a.Script, a.Timeout = "until", command, command, min(a.Timeout, 10*time.Minute)
	res, out := j.RunAgent(ctx, a)
	return out == agent.Finished && res.ExitCode == 0, cmp.Or(a.Stopped, agent.StopOf(out))
}

// judge asks a read-only agent whether the loop's condition holds. The judge
// is the profile the "judge" agent name maps to in the configuration, else
// the task's own profile, run in its most restrictive permission mode
// (claude: plan) in the iteration's run folder (judge/). It is given the
// condition verbatim, the iteration number, the task's prompt and the
// iteration's result. A judge that fails is asked once more; failing again
// counts as "not satisfied".
func judge(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, lp *prompt.Loop, iteration int, res agent.Result) (satisfied bool, stopped error) {
	l := j.List
	agentName := ""
	if _, ok := j.Config.Agents["judge"]; ok {
		agentName = "judge"
	} else if _, ok := j.Config.Profiles["judge"]; ok {
		agentName = "judge"
	}
	jsp := sp
	jsp.PermissionMode = "plan"
	jsp.Tools = nil
	if agentName != "" {
		jsp.Agent = agentName
	}
	for try := 1; try <= 2; try++ {
		a, err := j.NewAttempt(t, jsp, "", "")
		if err != nil {
			j.Log.Warn("loop judge", "list", l.ID, "task", t.ID, "err", err)
			return false, nil
		}
		a.Sub = "judge"
		if try == 2 {
			a.Sub = "judge-retry"
		}
		a.Prompt = judgePrompt(lp, iteration, task.Prompt(t, sp), res)
		a.Script = ""
		jr, out := j.RunAgent(ctx, a)
		if err := agent.StopOf(out); err != nil {
			return false, cmp.Or(a.Stopped, err)
		}
		if out == agent.Finished && jr.ExitCode == 0 {
			text := jr.Output
			if text == "" {
				data, _ := agent.ReadTail(a.ListDir, a.Dir()+"/stdout.log", agent.MaxScan)
				text = string(data)
			}
			return breakVerdict.MatchString(text), nil
		}
		j.Log.Warn("loop judge failed", "list", l.ID, "task", t.ID, "try", try, "err", jr.Error)
	}
	return false, nil
}

// judgePrompt is what the judge is asked.
func judgePrompt(lp *prompt.Loop, iteration int, tf string, res agent.Result) string {
	var b strings.Builder
	b.WriteString("You are checking whether a repeated task is finished. Look at the work (read files, run tests or read-only commands such as git diff or git status), but do not change anything.\n\n")
	fmt.Fprintf(&b, "## The condition\n\n<user-condition>\n%s\n</user-condition>\n\n", lp.Until)
	fmt.Fprintf(&b, "The task has now run %d of at most %d times.\n\n", iteration, lp.Max)
	fmt.Fprintf(&b, "## The task\n\n%s\n\n", strings.TrimSpace(tf))
	b.WriteString("## What the last run reported\n\n")
	if res.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n\n", res.Summary)
	}
	if res.Output != "" && res.Output != res.Summary {
		fmt.Fprintf(&b, "%s\n\n", agent.Truncate(res.Output, 8<<10))
	}
	b.WriteString("## Your answer\n\nIf the condition holds now, answer with exactly this line:\n\n<subtask2 loop=break/>\n\nOtherwise say briefly what is still missing, without that line; the task will run again.\n")
	return b.String()
}

// ContinueLoop records an iteration after which the loop goes on: the task
// is pending again (no state), to run its next iteration as a new attempt.
func ContinueLoop(ctx context.Context, j *job.Job, sp task.Spec, res agent.Result, iteration int) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	wctx, cancel := job.WriteContext(ctx)
	defer cancel()
	return l.Dir.Update(wctx, id, func(t *taskfile.Task) error {
		if _, err := task.Move(t, task.Iterate); err != nil {
			return err
		}
		m := task.Meta(t)
		m.Set("loopIteration", iteration)
		m.Set("result", job.ShortResult(res, area.RelRunDir(id, sp.Attempt)))
		m.Delete("finishedAt")
		return nil
	})
}
