package flow

import (
	"context"
	"fmt"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
)

// fork starts a workflow fork: one child task file per branch (the fields
// of /flow:run's fork protocol: subject "#<parent>/<branch> …", the branch's
// instructions as description, metadata with parentTaskId, forkStep and
// branchName), recorded in the parent's forkState and
// metadata.taskd.children; the parent waits. Children that already exist
// for this fork (a daemon that died half way) are reused, never duplicated.
func (f *flowRun) fork(ctx context.Context, resp *navigator.Response) (*taskfile.Task, error) {
	forkStep := resp.CurrentStep
	existing := f.existingBranches(forkStep)
	// A parent that still has forkState for this fork started it before:
	// the daemon died during the join, after archiving the children and
	// before advancing the parent. Its children, archived or not, are
	// this fork's: joining again reuses them; making new ones would run
	// every branch again.
	if fs := f.t.Metadata.Object("forkState"); fs != nil {
		if step, _ := fs.String("forkStep"); step == forkStep {
			branches := fs.Object("branches")
			for _, name := range branches.Keys() {
				if id, ok := branches.Object(name).String("childTaskId"); ok {
					if _, err := f.l.Dir.Read(id); err == nil {
						existing[name] = id
					}
				}
			}
		}
	}
	userDesc, _ := f.t.Metadata.String("userDescription")
	parentTD := f.t.Metadata.Object("taskd")
	branches := taskfile.NewObject()
	var ids []string
	for _, b := range resp.Fork.Branches {
		state := taskfile.NewObject()
		if b.Error != "" {
			state.Set("status", "failed")
			state.Set("error", b.Error)
			branches.Set(b.Name, state)
			continue
		}
		id, ok := existing[b.Name]
		if !ok {
			child, err := f.l.Dir.Create(ctx, f.branchTask(b, forkStep, userDesc, parentTD))
			if err != nil {
				return nil, fmt.Errorf("create branch %s of %s: %w", b.Name, forkStep, err)
			}
			id = child.ID
		}
		state.Set("status", "running")
		state.Set("childTaskId", id)
		branches.Set(b.Name, state)
		ids = append(ids, id)
	}
	t, err := f.l.Dir.Update(ctx, f.id, func(t *taskfile.Task) error {
		fs := taskfile.NewObject()
		fs.Set("forkStep", forkStep)
		fs.Set("joinStep", resp.Fork.JoinStep)
		fs.Set("joinStrategy", resp.Fork.JoinStrategy)
		fs.Set("branches", branches)
		t.EnsureMetadata().Set("forkState", fs)
		rec := task.RecordOf(t)
		if rec.Children == nil {
			rec.Children = taskfile.NewObject()
		}
		rec.Children.Set("parallel", ids)
		_, err := task.Apply(t, task.Wait, rec)
		return err
	})
	if err != nil {
		return nil, err
	}
	f.l.Events.Append(eventlog.Event{Type: eventlog.ForkStarted, List: f.l.ID, Task: f.id, Parent: f.sp.Parent, Step: forkStep,
		Data: map[string]any{"branches": branchIDs(branches), "joinStep": resp.Fork.JoinStep, "strategy": resp.Fork.JoinStrategy}})
	f.l.Events.Append(eventlog.Event{Type: eventlog.TaskWaiting, List: f.l.ID, Task: f.id, Parent: f.sp.Parent, Step: forkStep,
		Data: map[string]any{"children": ids}})
	return t, nil
}

func branchIDs(branches *taskfile.Object) map[string]any {
	out := map[string]any{}
	for _, name := range branches.Keys() {
		if id, ok := branches.Object(name).String("childTaskId"); ok {
			out[name] = id
		} else {
			out[name] = nil
		}
	}
	return out
}

// branchTask is the child task file of fork branch b: metadata.taskd
// holds the branch's own settings, then the fields it inherits from the
// forking task (task.Inherited) that those do not set, as a child of a
// plain task inherits them.
func (f *flowRun) branchTask(b navigator.ForkBranch, forkStep, userDesc string, parentTD *taskfile.Object) *taskfile.Task {
	agentName := "direct"
	if b.Subagent != "" {
		agentName = b.Subagent
	}
	md := taskfile.NewObject()
	for _, field := range b.Metadata.Fields() {
		md.Set(field.Key, field.Value)
	}
	md.Set("userDescription", userDesc)
	md.Set("parentTaskId", f.id)
	md.Set("forkStep", forkStep)
	md.Set("branchName", b.Name)
	ctd := md.EnsureObject("taskd")
	for k, v := range b.Settings.All() {
		ctd.Set(k, v) // the branch's own (its "taskd" in the workflow)
	}
	ctd.Set("parent", f.id)
	for _, k := range task.Inherited {
		if ctd.Has(k) {
			continue // the branch says otherwise
		}
		if v, ok := parentTD.Get(k); ok {
			ctd.Set(k, v)
		}
	}
	name := b.EntryStep
	if b.StepInstructions != nil {
		name = b.StepInstructions.Name
	}
	active := name
	if b.Subagent != "" {
		active += " (" + b.Subagent + ")"
	}
	t := &taskfile.Task{
		Subject:     fmt.Sprintf("#%s/%s %s\n→ %s · %s (%s)", f.id, b.Name, userDesc, workflowType(f.t), b.EntryStep, agentName),
		ActiveForm:  active,
		Description: b.OrchestratorInstructions,
		Owner:       task.Owner,
		Metadata:    md,
	}
	task.Begin(t, task.None) // pending, ready to run
	return t
}

// existingBranches finds child tasks already created for this parent's
// fork at forkStep (and not archived), by branch name.
func (f *flowRun) existingBranches(forkStep string) map[string]string {
	out := map[string]string{}
	ids, err := f.l.Dir.List()
	if err != nil {
		return out
	}
	for _, id := range ids {
		t, err := f.l.Dir.Read(id)
		if err != nil {
			continue
		}
		p, _ := t.Metadata.String("parentTaskId")
		fs, _ := t.Metadata.String("forkStep")
		name, _ := t.Metadata.String("branchName")
		if p == f.id && fs == forkStep && name != "" && !task.RecordOf(t).Archived {
			out[name] = id
		}
	}
	return out
}

// branchDone records a fork branch that reached its join: the branch passed
// if the step that led to the join passed. The child is completed; its
// parent joins once every branch is done.
func (f *flowRun) branchDone(ctx context.Context) (*taskfile.Task, error) {
	verdict := lastTrace(f.t).result
	if verdict == "" {
		verdict = "passed" // a branch whose entry is the join itself did nothing that failed
	}
	var uncommitted error
	if verdict == "passed" {
		// The branch's work goes on its own git branch, when it has one.
		if uncommitted = f.commitWork(ctx); job.Retryable(uncommitted) {
			return nil, uncommitted
		} else if uncommitted != nil {
			verdict = "failed"
		}
	}
	ev, state := task.BranchPass, task.Succeeded
	if verdict != "passed" {
		ev, state = task.BranchFail, task.Failed
	}
	t, err := f.l.Dir.Update(ctx, f.id, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		if uncommitted != nil {
			rec.Error = uncommitted.Error()
		}
		rec.FinishedAt = time.Now()
		rec.BranchResult = verdict
		_, err := task.Apply(t, ev, rec)
		return err
	})
	typ := eventlog.TaskSucceeded
	if state == task.Failed {
		typ = eventlog.TaskFailed
	}
	branch, _ := f.t.Metadata.String("branchName")
	f.l.Events.Append(eventlog.Event{Type: typ, List: f.l.ID, Task: f.id, Parent: f.sp.Parent, Step: currentStep(f.t),
		Data: map[string]any{"branch": branch, "branchResult": verdict}})
	return t, err
}

// joinVerdict computes a fork's result from its branches' children:
// all-pass passes when every branch passed, any-pass when at least one did.
// A branch whose child is missing, failed or never reached the join failed.
func joinVerdict(l *job.List, t *taskfile.Task) (string, map[string]any) {
	fs := t.Metadata.Object("forkState")
	strategy, _ := fs.String("joinStrategy")
	branches := fs.Object("branches")
	results := map[string]any{}
	passed, total := 0, 0
	for _, name := range branches.Keys() {
		total++
		r := "failed"
		if id, ok := branches.Object(name).String("childTaskId"); ok {
			if c, err := l.Dir.Read(id); err == nil {
				if task.RecordOf(c).BranchResult == "passed" {
					r = "passed"
				}
			}
		}
		if r == "passed" {
			passed++
		}
		results[name] = r
	}
	verdict := "failed"
	if strategy == "any-pass" && passed > 0 || strategy != "any-pass" && passed == total && total > 0 {
		verdict = "passed"
	}
	return verdict, results
}

// archive marks a finished child as archived: kept on disk with its
// results, its status as it ended, no longer counted by its parent.
// Children are never deleted.
func archive(ctx context.Context, l *job.List, id string) error {
	_, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		return task.Archive(t)
	})
	return err
}
