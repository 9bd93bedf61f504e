package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// taskd handoff and taskd converge run inside an agent, which is still
// running when they find that its task must fail (handoff --on-failure
// abort) or wait for a person (escalate; converge conflicts for manual
// review). They leave a verdict in the attempt's run folder, onexit.json;
// when the agent exits, finish applies it to that attempt: a fail verdict
// records the attempt as failed with the verdict's reason (whatever the
// agent's own result), a needs_human verdict makes the task needs_human
// with metadata.taskd.hitl. A verdict belongs to its attempt: an attempt
// the daemon interrupted runs again without it.

// verdictFile is the name of a verdict in a run folder.
const verdictFile = "onexit.json"

// Verdict actions.
const (
	verdictFail       = "fail"
	verdictNeedsHuman = "needs_human"
)

// verdict is onexit.json.
type verdict struct {
	Action    string     `json:"action"` // fail or needs_human
	Kind      string     `json:"kind"`   // handoff or converge
	Reason    string     `json:"reason"`
	Child     string     `json:"child,omitempty"` // handoff: the child
	Key       string     `json:"key,omitempty"`   // converge: the record
	Options   []string   `json:"options,omitempty"`
	Conflicts []conflict `json:"conflicts,omitempty"`
}

// writeVerdict leaves v in runDir. A fail verdict already there is kept:
// the first reason to fail wins.
func writeVerdict(runDir string, v verdict) error {
	if runDir == "" {
		return errors.New("no run folder to leave the verdict in ($TASKD_RUN_DIR is not set)")
	}
	path := filepath.Join(runDir, verdictFile)
	if old, ok := readVerdict(path); ok && old.Action == verdictFail {
		return nil
	}
	return agent.WriteJSONFile(runDir, path, v)
}

func readVerdict(path string) (verdict, bool) {
	data, err := fsroot.ReadRegular(path)
	if err != nil {
		return verdict{}, false
	}
	var v verdict
	if json.Unmarshal(data, &v) != nil || v.Action != verdictFail && v.Action != verdictNeedsHuman {
		return verdict{}, false
	}
	return v, true
}

// exitVerdict returns the verdict left for attempt sp.Attempt of task id,
// or nil. Only an agent that exited by itself has one: a timeout or a
// cancellation stands, and an interrupted attempt runs again.
func exitVerdict(l *job.List, id string, sp task.Spec, out agent.Outcome) *verdict {
	if out != agent.Finished || sp.Attempt == 0 {
		return nil
	}
	v, ok := readVerdict(filepath.Join(l.RunDir(id, sp.Attempt), verdictFile))
	if !ok {
		return nil
	}
	return &v
}

// fail makes res a failure for the verdict's reason.
func (v *verdict) fail(res agent.Result) agent.Result {
	res.Success = false
	res.Error = v.Reason
	res.Summary = v.Reason
	return res
}

// hitlRecord is metadata.taskd.hitl for a handoff or converge question.
type hitlRecord struct {
	Kind      string     `json:"kind"`   // handoff or converge
	Source    string     `json:"source"` // line (before the agent) or command (taskd handoff|converge)
	Line      int        `json:"line,omitempty"`
	Child     string     `json:"child,omitempty"`
	Key       string     `json:"key,omitempty"`
	Reason    string     `json:"reason"`
	Options   []string   `json:"options"`
	Conflicts []conflict `json:"conflicts,omitempty"`
	// AgentSuccess is the agent's own verdict on an attempt that asked
	// (source command): continue records it.
	AgentSuccess *bool `json:"agentSuccess,omitempty"`
	// Refused says why the last answer was not taken.
	Refused string `json:"refused,omitempty"`
}

// finishNeedsHuman records an attempt whose agent left a needs_human
// verdict: its result, and the task pending, needs_human, with hitl.
func finishNeedsHuman(ctx context.Context, j *job.Job, sp task.Spec, res agent.Result, v *verdict) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	wctx, cancel := job.WriteContext(ctx)
	defer cancel()
	ok := res.Success
	h := hitlRecord{Kind: v.Kind, Source: "command", Child: v.Child, Key: v.Key, Reason: v.Reason,
		Options: v.Options, Conflicts: v.Conflicts, AgentSuccess: &ok}
	t, err := l.Dir.Update(wctx, id, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		rec.FinishedAt = time.Now()
		rec.Result = task.Object(job.ShortResult(res, area.RelRunDir(id, sp.Attempt)))
		return setHITL(t, h, rec)
	})
	l.Emit(eventlog.Event{Type: eventlog.TaskNeedsHuman, Task: id, Parent: sp.Parent, Attempt: sp.Attempt,
		Data: map[string]any{"reason": h.Reason, "options": h.Options, "kind": h.Kind}})
	return t, err
}

// setHITL makes t wait for a person's answer to h, with rec.
func setHITL(t *taskfile.Task, h hitlRecord, rec task.Record) error {
	rec.Hold = objectOf(h)
	if _, err := task.Apply(t, task.AskPerson, rec); err != nil {
		return err
	}
	task.Meta(t).Delete("resolve")
	return nil
}

// askPerson ends a pass of t's leading lines with a question for a person:
// t becomes needs_human with h (TaskNeedsHuman); no agent ran, so the
// attempt number goes back to what it was.
func askPerson(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, h hitlRecord) error {
	l := j.List
	written, err := l.Dir.Update(ctx, t.ID, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		unclaim(&rec, t.ID, sp.Attempt)
		setHITL(t, h, rec)
		return nil
	})
	if err != nil {
		return err
	}
	l.Emit(eventlog.Event{Type: eventlog.TaskNeedsHuman, Task: t.ID, Parent: sp.Parent, Attempt: sp.Attempt - 1,
		Data: map[string]any{"reason": h.Reason, "options": h.Options, "kind": h.Kind, "line": h.Line}})
	return &suspended{task: written}
}

// HasVerdict reports whether the agent of attempt sp.Attempt of the job's
// task, which ended with out, left a verdict (taskd handoff or converge
// asked for one).
func HasVerdict(j *job.Job, sp task.Spec, out agent.Outcome) bool {
	return exitVerdict(j.List, j.ID, sp, out) != nil
}

// Finish records how attempt sp.Attempt of the job's task ended, as
// job.Finish does, unless its agent left a verdict: then the attempt ends
// failed with the verdict's reason, or the task waits for a person.
func Finish(ctx context.Context, j *job.Job, sp task.Spec, res agent.Result, out agent.Outcome) (*taskfile.Task, error) {
	if v := exitVerdict(j.List, j.ID, sp, out); v != nil {
		if v.Action == verdictNeedsHuman {
			return finishNeedsHuman(ctx, j, sp, res, v)
		}
		res = v.fail(res)
	}
	return j.Finish(ctx, sp, res, out, nil)
}
