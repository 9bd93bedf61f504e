package chain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/config"
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

// loopVerdict matches a judge's verdict: <subtask2 loop=break/> (the
// condition holds) or <subtask2 loop=continue/> (it does not yet),
// case-insensitive, quotes and the slash optional.
var loopVerdict = regexp.MustCompile(`(?i)<subtask2\s+loop\s*=\s*["']?(break|continue)["']?\s*/?\s*>`)

// JudgeVerdict returns the verdict of a judge's answer text, "break" or
// "continue" (the last one it gives), or "" when it gives none.
func JudgeVerdict(text string) string {
	all := loopVerdict.FindAllStringSubmatch(text, -1)
	if len(all) == 0 {
		return ""
	}
	return strings.ToLower(all[len(all)-1][1])
}

// untilVerdict is what a model judging a loop's condition must answer.
var untilVerdict = job.Verdict{
	Has:   func(r agent.Result) bool { return JudgeVerdict(r.Output) != "" },
	Again: AskJudgeAgain,
}

// AskJudgeAgain is what a judge is asked, in its session, when its answer
// has no verdict.
const AskJudgeAgain = "Your answer has no verdict, and the loop goes on or ends by it. Reply with exactly one line: <subtask2 loop=break/> if the condition holds now, or <subtask2 loop=continue/> if it does not."

// An Unjudged is a loop's condition its judge gave no verdict on, even
// asked again: a person is asked for it.
type Unjudged struct {
	Iteration int
	Asked     job.Asked
}

func (e *Unjudged) Error() string {
	return job.NoVerdict("the judge of the loop's condition", e.Asked)
}

// A Looping is task Task's loop Loop as an attempt of it, of spec Spec in
// job Job, meets it: what checks its condition and records the verdicts.
type Looping struct {
	Job  *job.Job
	Task *taskfile.Task
	Spec task.Spec
	Loop *prompt.Loop
}

// Check decides after a successful iteration whether a looping task
// runs again. An iteration is an attempt of the task (its own run folder);
// without a condition the task runs exactly loop.max times; with until, a
// read-only judge decides after each iteration, and the loop ends only on
// its explicit break verdict (a model must give break or continue: asked
// again when it gave neither); with untilCommand, the command's exit
// status 0 ends it. It returns the iteration number, whether the loop has
// ended and why; or, if the condition's agent was stopped before it could
// tell (the daemon stops, the task is cancelled), why it was stopped, and
// nothing is decided; or, as a *JudgeError, that the judge could not judge
// (it failed twice, or could not start): the loop ends in error; or, as an
// *Unjudged, that the judge's model gave no verdict: a person gives it
// (Decided). res is the iteration's result.
func (lg Looping) Check(ctx context.Context, res agent.Result) (iteration int, done bool, reason string, stopped error) {
	j, t, sp, lp := lg.Job, lg.Task, lg.Spec, lg.Loop
	l := j.List
	iteration = task.RecordOf(t).LoopIteration + 1
	satisfied := false
	by := "count"
	switch {
	case lp.UntilCommand != "":
		by = "command"
		satisfied, stopped = untilCommand(ctx, j, t, sp, lp.UntilCommand)
	case lp.Until != "":
		by = "judge"
		var failed error
		satisfied, stopped, failed = lg.judge(ctx, iteration, res)
		var unjudged *Unjudged
		if errors.As(stopped, &unjudged) {
			unjudged.Iteration = iteration
			return iteration, false, "", stopped
		}
		if failed != nil {
			l.Events.Append(eventlog.Event{Type: eventlog.LoopExited, List: l.ID, Task: t.ID, Parent: sp.Parent, Attempt: sp.Attempt,
				Data: map[string]any{"exitReason": LoopError, "iterations": iteration, "error": failed.Error()}})
			return iteration, true, LoopError, &JudgeError{failed}
		}
	}
	if stopped != nil {
		return iteration, false, "", stopped
	}
	done, reason = lg.Decided(iteration, satisfied, by)
	return iteration, done, reason, nil
}

// Decided records the verdict on iteration of the loop — the condition
// holds (satisfied) or not, as by (count, command, judge or person) found
// — and returns whether the loop has ended and why.
func (lg Looping) Decided(iteration int, satisfied bool, by string) (done bool, reason string) {
	j, t, sp, lp := lg.Job, lg.Task, lg.Spec, lg.Loop
	l := j.List
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
	return done, reason
}

// untilCommand runs a loop's condition command with the exec profile in the
// task's working directory, in the iteration's run folder (until/).
func untilCommand(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, command string) (satisfied bool, stopped error) {
	l := j.List
	a, err := j.NewAttempt(t, sp, "", "")
	if err == nil {
		a.Profile, err = j.Config.ResolveAgent(agent.ShellProfile, true)
	}
	if err != nil {
		j.Log.Warn("loop condition command", "list", l.ID, "task", t.ID, "err", err)
		return false, nil
	}
	a.Sub, a.Prompt, a.Script, a.Timeout = "until", command, command, min(a.Timeout, 10*time.Minute)
	res, out := j.RunAgent(ctx, a)
	return out == agent.Finished && res.ExitCode == 0, cmp.Or(a.Stopped, agent.StopOf(out))
}

// A JudgeError is a loop's judge that could not judge: the iteration's
// check failed, and with it the loop.
type JudgeError struct{ Err error }

func (e *JudgeError) Error() string {
	return "the loop's condition could not be judged: " + e.Err.Error()
}
func (e *JudgeError) Unwrap() error { return e.Err }

// judgeSpec is the spec the judge of task t runs with: the agent name
// "judge" when the configuration maps it (or has a profile of that name),
// else the task's own agent; in the most restrictive permission mode, with
// no tools of the task's.
func judgeSpec(j *job.Job, sp task.Spec) task.Spec {
	jsp := sp
	jsp.PermissionMode = "plan"
	jsp.Tools = nil
	if hasJudge(j.Config) {
		jsp.Agent = "judge"
	}
	return jsp
}

func hasJudge(cfg *config.Config) bool {
	_, mapped := cfg.Agents["judge"]
	_, profile := cfg.Profiles["judge"]
	return mapped || profile
}

// ErrNoJudge is returned (wrapped) by CheckLoop for a loop whose until
// condition has no model to judge it.
var ErrNoJudge = errors.New("no judge for the loop's condition")

// CheckLoop refuses, when a task is accepted, a loop with an until
// condition that nothing can judge: the judge (the "judge" agent of the
// configuration, else the task's own agent: agentName, owner (the profile
// the task's owner names) or the default) must read its prompt, not run
// it: a profile that runs its prompt as a shell script (exec, sh -c)
// would fail on every iteration.
func CheckLoop(cfg *config.Config, owner string, lp *prompt.Loop, agentName string) error {
	if lp == nil || lp.Until == "" {
		return nil
	}
	name, explicit, whose := "judge", true, "the configuration's judge"
	if !hasJudge(cfg) {
		name, whose = firstOf(agentName, owner), "the task's own agent"
		explicit = name != ""
	}
	prof, err := cfg.ResolveAgent(name, explicit)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoJudge, err)
	}
	if runsScript(prof) {
		return fmt.Errorf(`%w: the until condition %q needs a model to judge it after each iteration; the judge would be %s, the %q profile, which runs its prompt as a shell script`,
			ErrNoJudge, agent.Truncate(lp.Until, 60), whose, prof.Name)
	}
	return nil
}

// runsScript reports whether profile p runs its prompt as a shell script:
// a shell with -c, given the prompt as its argument (the exec profile).
func runsScript(p *config.Profile) bool {
	if p.Prompt != "arg" || len(p.Command) < 2 {
		return false
	}
	switch filepath.Base(p.Command[0]) {
	case "sh", "bash", "dash", "zsh", "ksh":
		return slices.Contains(p.Command[1:], "-c")
	}
	return false
}

// JudgeFix says how to give a loop a judge.
const JudgeFix = `Map the agent name "judge" to a model's profile in the configuration ("agents": {"judge": "claude"}), run the task with a model's profile ("agent": "claude"), or check the condition with a shell command instead (untilCommand, whose exit status 0 ends the loop).`

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// judge asks a read-only agent whether the loop's condition holds (the
// profile judgeSpec chooses), in the iteration's run folder (judge/). It
// is given the condition verbatim, the iteration number, the task's prompt
// and the iteration's result. A judge that fails is asked once more
// (judge-retry/); failing again is an error: the condition was not judged,
// which is not the same as "not satisfied". A model's answer without a
// verdict is asked for one again in its session (judge-verdict/); still
// none is an *Unjudged, returned as stopped.
func (lg Looping) judge(ctx context.Context, iteration int, res agent.Result) (satisfied bool, stopped, failed error) {
	j, t, sp, lp := lg.Job, lg.Task, lg.Spec, lg.Loop
	l := j.List
	jsp := judgeSpec(j, sp)
	for try := 1; try <= 2; try++ {
		a, err := j.NewAttempt(t, jsp, "", "")
		if err != nil {
			return false, nil, err
		}
		a.Sub = "judge"
		if try == 2 {
			a.Sub = "judge-retry"
		}
		a.Prompt = judgePrompt(lp, iteration, task.Prompt(t, sp), res)
		a.Script = ""
		jr, out := j.RunAgent(ctx, a)
		if err := agent.StopOf(out); err != nil {
			return false, cmp.Or(a.Stopped, err), nil
		}
		if out == agent.Finished && jr.ExitCode == 0 {
			if agent.IsModel(a.Profile) {
				asked := j.AskAgain(ctx, a, jr, untilVerdict)
				switch {
				case asked.Out != agent.Finished:
					return false, cmp.Or(a.Stopped, agent.StopOf(asked.Out), error(agent.ErrPaused)), nil
				case !asked.Verdict:
					return false, &Unjudged{Asked: asked}, nil
				}
				return JudgeVerdict(asked.Res.Output) == "break", nil, nil
			}
			text := jr.Output
			if text == "" {
				data, _ := agent.ReadTail(a.ListDir, a.Dir()+"/stdout.log", agent.MaxScan)
				text = string(data)
			}
			return JudgeVerdict(text) == "break", nil, nil
		}
		j.Log.Warn("loop judge failed", "list", l.ID, "task", t.ID, "try", try, "err", jr.Error)
		failed = fmt.Errorf("its judge (the %s profile) failed twice, the last time with: %s", a.Profile.Name, agent.Truncate(firstOf(jr.Error, jr.Summary, "no answer"), 300))
	}
	return false, nil, failed
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
	b.WriteString("## Your answer\n\nEnd your answer with your verdict, exactly one of these lines. If the condition holds now:\n\n<subtask2 loop=break/>\n\n")
	b.WriteString("If it does not hold yet, say briefly what is still missing, then:\n\n<subtask2 loop=continue/>\n\nThe task runs again, or ends, by that line; an answer without it is asked for it again, and then a person decides.\n")
	return b.String()
}

// ContinueLoop records an iteration after which the loop goes on: the task
// is pending again (no state), to run its next iteration as a new attempt.
func ContinueLoop(ctx context.Context, j *job.Job, sp task.Spec, res agent.Result, iteration int) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	wctx, cancel := job.WriteContext(ctx)
	defer cancel()
	return l.Dir.Update(wctx, id, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		rec.Result = task.Object(job.ShortResult(res, area.RelRunDir(id, sp.Attempt)))
		rec.FinishedAt = time.Time{}
		rec.LoopIteration = iteration
		_, err := task.Apply(t, task.Iterate, rec)
		return err
	})
}
