package job

import (
	"context"
	"fmt"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Gates. A step whose verdict decides a path — a workflow step, a loop's
// judge, a child whose answer is voted on — is never decided by the exit
// status of a model's agent: its prompt gives the verdict's format; an
// answer without a verdict is asked once more, in the same session, for
// just the verdict (AskAgain: part of the same attempt, in a folder of
// its own inside the attempt's run folder); an answer still without one
// goes to a person, shown in metadata.taskd.hitl (kind "verdict"). An
// exec agent (a program, not a model) is decided by its exit status.

// A Verdict is what a gate needs from its agent's answer.
type Verdict struct {
	// Has reports whether an answer carries the verdict.
	Has func(agent.Result) bool
	// Again asks for just the verdict, in its exact format.
	Again string
}

// AgainSub is the folder, inside the run folder of attempt a (inside its
// own Sub, if it has one), of the question asked again.
func AgainSub(a *agent.Attempt) string {
	if a.Sub == "" {
		return "verdict"
	}
	return a.Sub + "-verdict"
}

// An Asked is how a gate's answer stands after AskAgain.
type Asked struct {
	Res agent.Result
	Out agent.Outcome
	// Verdict is set when the answer (perhaps the second) carries the
	// verdict; Res is then the attempt's result with it.
	Verdict bool
	// Again is set when the agent was asked again.
	Again bool
	// Said is what the agent answered, both times, for a person.
	Said string
}

// Maximum length of an agent's answer shown to a person in
// metadata.taskd.hitl.answer.
const saidMax = 4 << 10

// AskAgain makes sure the answer res of attempt a, which finished, carries
// the verdict v needs. A model's answer without it is asked again, once,
// by continuing its session with v.Again (claude: --resume; other
// profiles cannot be, and are not asked), in the run folder's AgainSub;
// an answer given there before (the daemon stopped meanwhile) is used
// instead of asking a third time. When the second answer has the verdict,
// the attempt's result becomes both answers (agent.WithVerdict), written
// over its result.json. A second run that was stopped (the daemon stops,
// the task is cancelled, a usage limit) returns its outcome: nothing is
// decided.
func (j *Job) AskAgain(ctx context.Context, a *agent.Attempt, res agent.Result, v Verdict) Asked {
	if !agent.IsModel(a.Profile) || v.Has(res) {
		return Asked{Res: res, Out: agent.Finished, Verdict: true}
	}
	said := res.Output
	again := *a
	again.Sub, again.Resume, again.Session, again.Fork = AgainSub(a), res.SessionID, "", false
	again.Prompt, again.Script, again.Files = v.Again, "", nil
	again.Gate, again.Report = nil, nil // the job's slot; progress as it comes
	again.MadeDir, again.Started, again.Stopped = false, false, nil
	second, ok := agent.ReadResult(again.Dir())
	if ok && (agent.OutcomeOf(second) != agent.Finished || second.SessionID != res.SessionID) {
		ok = false // cut short before, or the answer to another run: asked again now
	}
	if !ok {
		if !agent.CanContinue(a.Profile, res.SessionID) {
			return NotAsked(res)
		}
		j.Log.Info("the agent's answer has no verdict: asking again in the same session", "list", j.List.ID, "task", a.TaskID, "attempt", a.N, "run", again.Dir())
		var out agent.Outcome
		second, out = j.RunAgent(ctx, &again)
		a.Stopped = again.Stopped
		if err := agent.StopOf(out); err != nil || out == agent.Paused {
			return Asked{Res: second, Out: out, Again: true}
		}
	}
	said = strings.TrimSpace(said + "\n\n" + second.Output)
	if !v.Has(second) {
		return Asked{Res: res, Out: agent.Finished, Again: true, Said: bound(said)}
	}
	res = agent.WithVerdict(res, second)
	if kept, err := agent.WriteResult(a.ListDir, a.Dir(), res); err != nil && kept == "" {
		j.Log.Warn("write the result with its verdict", "list", j.List.ID, "task", a.TaskID, "run", a.Dir(), "err", err)
	}
	return Asked{Res: res, Out: agent.Finished, Verdict: true, Again: true}
}

func bound(s string) string { return agent.TailOf(strings.TrimSpace(s), saidMax) }

// NotAsked is how answer res stands when its agent cannot be asked again
// (its attempt cannot be made again): without a verdict.
func NotAsked(res agent.Result) Asked {
	return Asked{Res: res, Out: agent.Finished, Said: bound(res.Output)}
}

// NoVerdict says, for a person, that who gave no verdict: whether it was
// asked again, and the end of its answer on one line.
func NoVerdict(who string, asked Asked) string {
	again := "and none when asked again"
	if !asked.Again {
		again = "and could not be asked again (taskd continues only claude sessions it knows)"
	}
	said := strings.Join(strings.Fields(asked.Said), " ")
	if said == "" {
		return fmt.Sprintf("%s gave no verdict, %s; it said nothing", who, again)
	}
	said = agent.TailOf(said, 300)
	return fmt.Sprintf("%s gave no verdict, %s; it answered: %q", who, again, said)
}

// A VerdictQuestion asks a person for the verdict an agent did not give
// (metadata.taskd.hitl, kind "verdict").
type VerdictQuestion struct {
	Gate    string   // what the verdict decides: "until" (a loop's judge) or "vote" (an answer voted on)
	Reason  string   // NoVerdict's words and what the answers do
	Options []string // the answers
	Said    string   // what the agent answered
}

// FinishUnjudged records attempt sp.Attempt of the job's task, which
// finished with res but whose gate has no verdict: its result, and the
// task needs_human with q in metadata.taskd.hitl (kind "verdict", with
// the gate, the attempt's run, and the agent's answer).
func (j *Job) FinishUnjudged(ctx context.Context, sp task.Spec, res agent.Result, q VerdictQuestion) (*taskfile.Task, error) {
	runDir := area.RelRunDir(j.ID, sp.Attempt)
	var t *taskfile.Task
	err := j.Persist(ctx, fmt.Sprintf("the end of attempt %d is not recorded yet (its result is kept until it is)", sp.Attempt), sp.Parent, func(wctx context.Context) error {
		var err error
		t, err = j.List.Dir.Update(wctx, j.ID, func(t *taskfile.Task) error {
			rec := task.RecordOf(t)
			rec.FinishedAt = j.Now()
			rec.Result = task.Object(ShortResult(res, runDir))
			rec.InterruptedSession = ""
			if res.Progress != nil {
				rec.Progress = task.Object(asValue(res.Progress))
			}
			rec.Grant = nil
			rec.Hold = verdictHITL(q, sp.Attempt)
			if _, err := task.End(t, task.AskPerson, rec); err != nil {
				return err
			}
			task.Meta(t).Delete("resolve")
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record the end of attempt %d: %w", sp.Attempt, err)
	}
	j.SettleResult(sp.Attempt)
	j.Emit(eventlog.Event{Type: eventlog.TaskNeedsHuman, Parent: sp.Parent, Attempt: sp.Attempt,
		Data: map[string]any{"reason": q.Reason, "options": q.Options, "kind": HITLVerdict, "gate": q.Gate}})
	return t, nil
}

// HITLVerdict is the kind of metadata.taskd.hitl that asks a person for a
// verdict an agent did not give.
const HITLVerdict = "verdict"

func verdictHITL(q VerdictQuestion, run int) *taskfile.Object {
	h := taskfile.NewObject()
	h.Set("kind", HITLVerdict)
	h.Set("gate", q.Gate)
	h.Set("reason", q.Reason)
	h.Set("options", q.Options)
	h.Set("answer", q.Said)
	h.Set("run", run)
	return h
}

// AsksVerdict reports whether task t waits for a person's verdict on its
// gate: needs_human with a hitl of kind "verdict" for gate.
func AsksVerdict(t *taskfile.Task, gate string) bool {
	h := task.RecordOf(t).Hold
	kind, _ := h.String("kind")
	g, _ := h.String("gate")
	return kind == HITLVerdict && g == gate && task.Of(t) == task.NeedsHuman
}
