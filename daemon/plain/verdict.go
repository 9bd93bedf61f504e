package plain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/chain"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// The gates of plain tasks (job.AskAgain): a loop's judge (package chain)
// and a child whose answer a /converge vote or consensus compares
// (metadata.taskd.answerRequired). A model that gives no verdict, even
// asked again, leaves the task needs_human (hitl kind "verdict", gate
// "until" or "vote"), and a person gives the verdict:
//
//	until  break     the condition holds: the loop ends, the task succeeds
//	       continue  it does not: the next iteration runs (after the last,
//	                 the loop ends as max_reached)
//	vote   abstain   the task succeeds with the answer it gave, which has
//	                 no vote
//	       retry     the task runs again, a new attempt
//	both   fail      the task fails
//	       leave     the question stays

// Answers to a question about a verdict.
const (
	answerBreak    = "break"
	answerContinue = "continue"
	answerAbstain  = "abstain"
	answerRetry    = "retry"
	answerFail     = "fail"
	answerLeave    = "leave"
)

// VoteFormat is what a task whose answer is voted on is told of its answer.
const VoteFormat = "## Your answer\n\nYour answer is compared with other agents' answers to the same question (a vote). End it with one line of JSON, for example:\n\n" +
	`{"success": true, "summary": "one sentence on how you got there", "answer": "your answer, in a few words"}` + "\n\n" +
	`Answers are compared with case and blanks ignored (numbers as numbers), so "answer" is the choice itself. Answer "success": false if you could not answer. ` +
	"The vote counts this line: an answer without it is asked for it again, and then a person decides.\n"

// AskVoteAgain is what such a task's agent is asked, in its session, when
// its answer has no answer line.
const AskVoteAgain = `Your answer has no answer line, and it is counted in a vote. Reply with only that line, one line of JSON: {"success": true, "summary": "…", "answer": "your answer, in a few words"}, or {"success": false, "summary": "why"} if you cannot answer.`

// voteVerdict is what a model's answer that is voted on must carry: the
// result object with an answer, or saying it failed.
var voteVerdict = job.Verdict{
	Has: func(r agent.Result) bool {
		return agent.HasReport(r.Output) && (!r.Success || strings.TrimSpace(r.Answer) != "")
	},
	Again: AskVoteAgain,
}

// votes reports whether task t's answer is voted on.
func votes(t *taskfile.Task) bool {
	sp, err := task.ReadSpec(t)
	return err == nil && sp.AnswerRequired
}

// askVote makes sure the answer res of attempt sp.Attempt of task t, whose
// answer is voted on, carries one when its agent is a model
// (job.AskAgain); ok is false when it does not.
func askVote(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, res agent.Result) (asked job.Asked, ok bool) {
	a, err := j.NewAttempt(t, sp, "", "")
	if err != nil {
		j.Log.Warn("the agent cannot be asked for its answer", "list", j.List.ID, "task", t.ID, "err", err)
		return job.NotAsked(res), false
	}
	asked = j.AskAgain(ctx, a, res, voteVerdict)
	return asked, asked.Verdict
}

// voteQuestion asks a person about an answer to vote on that has none.
func voteQuestion(asked job.Asked) job.VerdictQuestion {
	return job.VerdictQuestion{Gate: "vote", Said: asked.Said,
		Reason: job.NoVerdict("its agent", asked) + "; its answer is to be voted on. " +
			"Answer abstain to let it succeed without a vote, retry to run it again, or fail (taskd resolve), or leave it waiting",
		Options: []string{answerAbstain, answerRetry, answerFail, answerLeave}}
}

// untilQuestion asks a person whether loop lp's condition holds, which its
// judge did not say.
func untilQuestion(u *chain.Unjudged, lp *prompt.Loop) job.VerdictQuestion {
	next := "the next iteration runs"
	if u.Iteration >= lp.Max {
		next = fmt.Sprintf("this was its last iteration of %d: the loop ends as max_reached", lp.Max)
	}
	reason := fmt.Sprintf("%s; answer break if the condition holds after iteration %d (the loop ends), continue if not (%s), or fail (taskd resolve), or leave it waiting",
		u.Error(), u.Iteration, next)
	return job.VerdictQuestion{Gate: "until", Reason: reason, Said: u.Asked.Said,
		Options: []string{answerBreak, answerContinue, answerFail, answerLeave}}
}

// Answer takes a person's verdict for a plain task whose gate had none
// (metadata.taskd.hitl kind "verdict"). break, continue and abstain go on
// with the attempt that ran, as its verdict would have; retry, fail and
// leave are written at once. An answer the question does not offer is
// consumed, and hitl.refused says why.
func Answer(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	var answer string
	var refused bool
	t, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		sp, err := task.ReadSpec(t)
		if err != nil || sp.Resolve == "" || !(job.AsksVerdict(t, "until") || job.AsksVerdict(t, "vote")) {
			return job.ErrNotRunnable
		}
		answer = sp.Resolve
		m := task.Meta(t)
		rec := task.RecordOf(t)
		h := rec.Hold
		refused = !slices.Contains(task.Strings(h, "options"), answer)
		if refused {
			m.Delete("resolve")
			h.Set("refused", fmt.Sprintf("%q is not an answer here; answer one of: %s", answer, strings.Join(task.Strings(h, "options"), ", ")))
			task.Store(t, rec)
			return nil
		}
		switch answer {
		case answerLeave:
			m.Delete("resolve")
		case answerRetry:
			rec.Error, rec.Hold = "", nil
			if _, err := task.Apply(t, task.Restart, rec); err != nil {
				return err
			}
		case answerFail:
			reason, _ := h.String("reason")
			rec.Error, rec.FinishedAt = "a person answered fail: "+reason, time.Now()
			rec.Hold = nil
			if _, err := task.Apply(t, task.Fail, rec); err != nil {
				return err
			}
			m.Delete("resolve")
		default:
			return errGoOn // claimed below
		}
		return nil
	})
	switch {
	case errors.Is(err, errGoOn):
		return goOn(ctx, j, answer)
	case err != nil:
		return nil, err
	case refused:
		j.Log.Warn("answer is not an option", "list", l.ID, "task", id, "answer", answer)
		j.Emit(eventlog.Event{Type: eventlog.HumanResolved, Data: map[string]any{"answer": answer, "kind": job.HITLVerdict, "refused": true}})
		return t, nil
	}
	j.Emit(eventlog.Event{Type: eventlog.HumanResolved, Data: map[string]any{"answer": answer, "kind": job.HITLVerdict}})
	if answer == answerFail {
		j.Emit(eventlog.Event{Type: eventlog.TaskFailed, Data: map[string]any{"error": "a person answered fail"}})
	}
	return t, nil
}

// errGoOn stops the write of an answer that goes on with the attempt.
var errGoOn = errors.New("go on")

// goOn goes on with the attempt a person gave the verdict answer for:
// the task is claimed again for that attempt (its number unchanged), and
// what its verdict leads to follows — the loop's next iteration or its
// end (break, continue), the task's success (abstain).
func goOn(ctx context.Context, j *job.Job, answer string) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	var gate string
	c, err := j.Claim(ctx, func(t *taskfile.Task, sp *task.Spec) error {
		if sp.Resolve != answer || !(job.AsksVerdict(t, "until") || job.AsksVerdict(t, "vote")) {
			return job.ErrNotRunnable // answered again meanwhile
		}
		rec := task.RecordOf(t)
		gate, _ = rec.Hold.String("gate")
		task.Meta(t).Delete("resolve")
		rec.Hold = nil
		task.Store(t, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	t, sp := c.Task, c.Spec
	j.Emit(eventlog.Event{Type: eventlog.HumanResolved, Parent: sp.Parent, Attempt: sp.Attempt, Data: map[string]any{"answer": answer, "kind": job.HITLVerdict, "gate": gate}})
	res, _ := agent.ReadResult(l.RunDir(id, sp.Attempt))
	res.Success = true // it succeeded: its gate had no verdict
	e := &ended{j: j, t: t, sp: sp, res: res}
	if gate != "until" {
		return e.succeed(ctx, func(lp *prompt.Loop) (int, bool, string, error) {
			return loopCheck(ctx, chain.Looping{Job: j, Task: t, Spec: sp, Loop: lp}, res) // a loop whose iteration was voted on
		})
	}
	return e.succeed(ctx, func(lp *prompt.Loop) (int, bool, string, error) {
		iteration := task.RecordOf(t).LoopIteration + 1
		done, reason := chain.Looping{Job: j, Task: t, Spec: sp, Loop: lp}.Decided(iteration, answer == answerBreak, "person")
		return iteration, done, reason, nil
	})
}
