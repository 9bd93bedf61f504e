package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/calendar"
	"github.com/taskd/taskd/daemon/catalog"
	"github.com/taskd/taskd/daemon/chain"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/plain"
	"github.com/taskd/taskd/daemon/recur"
	"github.com/taskd/taskd/daemon/retention"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// tornGrace is how long a file that does not parse may stay that way before
// it is rejected. Claude Code rewrites task files in place (truncate, then
// write), so a read can land between the two; the next event or this
// re-check sees the whole file.
const tornGrace = 500 * time.Millisecond

// observe records the newly read contents of task id and reacts: it keeps
// dependency and parent links current, rejects a taskd task that asks for
// something impossible, and marks the task for evaluation by the scheduler.
func (d *Daemon) observe(l *list, id string, e *entry, tf *taskfile.Task) {
	prevStatus, prevState, prevCancel, prevParent := e.status, e.state, e.cancel, e.parent
	e.badReason, e.badSince = "", time.Time{}
	delete(l.recheck, id)
	if e.holdUntil.After(l.clock.Now()) {
		l.recheckAt(id, e.holdUntil) // a held task is looked at again when its hold ends
	}
	owned, ownerProfile := task.Addressed(tf)
	e.status = tf.Status
	if e.status == "" {
		e.status = taskfile.StatusPending
	}
	e.owned = owned
	l.setBlockedBy(id, tf.BlockedBy)
	if e.status != prevStatus {
		l.wakeWaiters(id)
	}
	if !owned {
		if e.job != nil {
			// Taken from taskd while its agent runs: shown as a rejection,
			// never left running unseen.
			d.reject(l, id, e, fmt.Sprintf("the file no longer addresses taskd (owner %q, no metadata.taskd) while the task's agent runs", tf.Owner),
				`Give the task back to taskd (owner "taskd"), or stop its agent: taskd cancel, or "cancel": true in metadata.taskd.`+runsOn)
		} else {
			d.clearReject(l, id, e)
		}
		e.state, e.parent, e.children, e.delivered = "", "", nil, false
		e.finishedAt, e.branchOf = time.Time{}, retention.ParentOf(tf)
		l.setParent(id, prevParent, "")
		e.seen = false
		return
	}
	sp, rec, err := task.Load(tf)
	if err == nil {
		err = d.validate(l, id, tf, sp)
	}
	wf, _ := tf.Metadata.String("workflowType")
	if err == nil && wf == "" && !sp.State.Ended() && tf.Status != taskfile.StatusCompleted {
		err = plain.CheckPrompt(d.inspect(l, id), sp)
	}
	if err != nil {
		fix := fixFor(err)
		if e.job != nil {
			fix += runsOn
		}
		d.reject(l, id, e, err.Error(), fix)
		d.cancelRefused(l, id, e, tf)
		return
	}
	d.clearReject(l, id, e)
	e.startedAt, e.failure = rec.StartedAt, rec.Error
	_, e.costUSD = job.ResultIn(rec)
	e.holdReason, _ = rec.Hold.String("reason")
	e.state, e.parent, e.retryAt = rec.State, sp.Parent, rec.RetryAt
	e.finishedAt, e.branchOf = rec.FinishedAt, ""
	if p := retention.ParentOf(tf); p != sp.Parent {
		e.branchOf = p
	}
	e.cancel, e.resolve, e.archived = sp.Cancel, sp.Resolve, rec.Archived
	e.boundary = sp.State == task.Succeeded && rec.Boundary != nil
	e.delivered = rec.Delivered
	e.children = children.WaitsFor(tf)
	e.waitOnFailure = sp.OnBlockerFailure == "wait"
	if e.priority != sp.Priority {
		l.unready(id) // queued again in its new place
		e.priority = sp.Priority
	}
	e.notBefore, e.scheduledFor = sp.NotBefore, sp.ScheduledFor
	e.recur = nil
	if sp.Schedule != "" {
		s, _ := calendar.ParseSchedule(sp.Schedule) // checked by validate
		e.recur = &recurrence{sched: s, rec: recur.Of(tf)}
	}
	l.setParent(id, prevParent, e.parent)
	if e.state != prevState || e.status != prevStatus || e.cancel != prevCancel {
		l.considerKids(id) // a cancel, or an end, reaches the tasks below (settle.go)
	}
	if e.seen && e.state != prevState {
		d.tellAncestors(l, id, e, tf)
		d.reportEnd(l, id, tf, rec)
	}
	d.observeRuns(l, id, e, observation{tf, sp, rec, ownerProfile}, prevState) // profile, pause, worktree, notice (runs.go)
	d.spend(l, e)                                                              // toward budgets per window (admission.go)
	e.seen = true
	d.observeSubagents(l, id, e, tf) // waits and handoff links (waits.go)
	if !e.accepted && l.acceptedBefore[id] {
		e.accepted = true // by an earlier daemon
	}
	if !e.accepted && e.state == task.None && e.status == taskfile.StatusPending && rec.Attempt == 0 {
		e.accepted = true
		l.Events.Append(eventlog.Event{Type: eventlog.TaskAccepted, List: l.ID, Task: id, Parent: e.parent,
			Data: map[string]any{"subject": tf.Subject}})
	}
	e.returnOf, _ = tf.Metadata.Object("taskd").String("returnOf")
	if e.state != prevState && e.status == prevStatus {
		l.wakeWaiters(id) // a chain's origin now waiting lets its first step run
	}
	if e.state != prevState || e.status != prevStatus {
		for _, up := range []string{e.parent, e.returnOf} {
			if up != "" {
				l.consider(up) // a parent, or a chain's origin, may go on
			}
		}
	}
	if e.job != nil {
		if sp.Cancel {
			e.job.stop(agent.ErrCancelled)
		}
		return
	}
	l.consider(id)
}

// tellAncestors logs, on each task above task id, that it now needs a
// person or failed (ChildNeedsAttention): a task taken to that state while
// this daemon watched.
func (d *Daemon) tellAncestors(l *list, id string, e *entry, tf *taskfile.Task) {
	if e.parent == "" {
		return
	}
	var reason string
	switch e.state {
	case task.NeedsHuman:
		reason = e.holdReason
		if reason == "" {
			reason = "it waits for a person's answer"
		}
	case task.Failed, task.TimedOut, task.Stopped:
		reason = e.failure
	default:
		return
	}
	d.inspect(l, id).TellAncestors(e.parent, string(e.state), reason)
}

// validate checks what a taskd task asks for beyond field types: that its
// agent and workflow exist, that it is not its own parent, and that a
// schedule is one.
//
// Every id the task names (parent, children, blockedBy) must be a task id:
// ids name files, inboxes and run folders, so one that is not cannot be
// met, and is refused here rather than waited on forever (see checkIDs).
//
// It takes the file t as well as its Spec: task.Check reads the ids in
// blockedBy and children and the fields where a NUL byte is refused, and
// the workflow is metadata.workflowType: none of them is in a Spec.
func (d *Daemon) validate(l *list, id string, t *taskfile.Task, sp task.Spec) error {
	if err := d.cfg.CheckAgents(sp, sp.OwnerProfile); err != nil {
		return err
	}
	if err := task.Check(t, id, sp); err != nil {
		return err
	}
	if sp.Schedule != "" {
		if _, err := calendar.ParseSchedule(sp.Schedule); err != nil {
			return fmt.Errorf("metadata.taskd.schedule: %w", err)
		}
		if wf, _ := t.Metadata.String("workflowType"); wf != "" {
			return errors.New("metadata.taskd.schedule: a schedule runs a prompt; a workflow (metadata.workflowType) cannot be one: make the schedule's prompt submit the workflow, or drop one of the two")
		}
	}
	if v, ok := t.Metadata.Get("workflowType"); ok && v != nil {
		wf, isString := v.(string)
		if !isString {
			return fmt.Errorf("metadata.workflowType is %s, want the id of a workflow as a string", taskfile.TypeName(v))
		}
		if wf != "" {
			if err := d.catalog.CheckWorkflow(l.Dir.Path(), wf); err != nil {
				return err
			}
		}
	}
	return nil
}

// fixFor returns advice for a validation error.
func fixFor(err error) string {
	switch {
	case errors.Is(err, task.ErrBadID):
		return "Use the id of a task in this list: its file name without .json (1-128 of A-Z a-z 0-9 _ -)."
	case errors.Is(err, task.ErrNUL):
		return "Remove the NUL byte (\\u0000) from the field named."
	case errors.Is(err, config.ErrUnknownAgent):
		return "Use one of the profiles named above, or add the profile or agent mapping to the configuration file."
	case errors.Is(err, catalog.ErrInvalidWorkflow):
		return "Correct the workflow file as described (`taskd workflows validate FILE` checks it), then save the task file again; or name another workflow."
	case errors.Is(err, chain.ErrNoJudge):
		return chain.JudgeFix
	case errors.Is(err, catalog.ErrUnknownWorkflow):
		return "Use a workflow listed by `taskd workflows list`, or add <id>.json to a workflow directory."
	}
	return "Correct the field as described; taskd picks the file up again as soon as it is fixed."
}

// setBlockedBy replaces the dependency links of task id.
func (l *list) setBlockedBy(id string, blockedBy []string) {
	e := l.entries[id]
	if e != nil {
		for _, b := range e.blockedBy {
			if w := l.waiters[b]; w != nil {
				delete(w, id)
				if len(w) == 0 {
					delete(l.waiters, b)
				}
			}
		}
		e.blockedBy = slices.Clone(blockedBy)
	}
	for _, b := range blockedBy {
		if l.waiters[b] == nil {
			l.waiters[b] = map[string]struct{}{}
		}
		l.waiters[b][id] = struct{}{}
	}
}

// wakeWaiters marks the dependents of id for evaluation.
func (l *list) wakeWaiters(id string) {
	for w := range l.waiters[id] {
		l.consider(w)
	}
}

// badFile handles a task file taskd cannot read as a task.
func (d *Daemon) badFile(l *list, id string, e *entry, bad *taskfile.BadFileError) {
	if e == nil {
		e = &entry{}
		l.entries[id] = e
	}
	e.hash = 0
	prevStatus := e.status
	e.status, e.owned = "", false // unknown: blocks its dependents
	if prevStatus != "" {
		l.wakeWaiters(id)
	}
	reason := strings.TrimPrefix(bad.Error(), bad.Path+": ")
	if errors.Is(bad, taskfile.ErrInvalidJSON) || errors.Is(bad, taskfile.ErrTooLarge) {
		// Possibly caught mid-write: give the writer the grace period.
		now := l.clock.Now()
		if e.badReason != reason {
			e.badReason, e.badSince = reason, now
		}
		_, lockErr := os.Stat(l.Dir.File(id) + ".lock")
		if now.Sub(e.badSince) < tornGrace || lockErr == nil {
			l.recheckAt(id, e.badSince.Add(tornGrace))
			return
		}
	}
	fix := bad.Fix
	if e.job != nil {
		fix += runsOnBad
	}
	d.reject(l, id, e, reason, fix)
}

func (l *list) recheckAt(id string, at time.Time) {
	if now := l.clock.Now(); at.Before(now) {
		at = now.Add(tornGrace)
	}
	l.recheck[id] = at
	if l.nextRecheck.IsZero() || at.Before(l.nextRecheck) {
		l.nextRecheck = at
	}
}

// reject records that task id is refused: a TaskRejected event and
// .taskd/rejected/<id>.json.txt say what is wrong and how to fix it. The task
// file itself is never touched. A rejection is recorded once per problem.
func (d *Daemon) reject(l *list, id string, e *entry, problem, fix string) {
	if e.job != nil {
		// A running task's file was broken by hand; the job keeps its copy.
		d.log.Warn("task file changed into something taskd rejects while it runs", "list", l.ID, "task", id, "err", problem)
	}
	if e.reject == problem {
		return
	}
	e.reject = problem
	d.writeRejection(l, id, id+".json", problem, fix)
}

// runsOn ends the fix of a rejection of a task whose agent runs: of a
// file that parses, and of one that does not (badFile), which no cancel
// can be written into.
const (
	runsOn    = " Meanwhile the task's agent runs on, and its end is recorded in the file when it ends; metadata.taskd.cancel: true in the file, or taskd cancel, stops it."
	runsOnBad = " Meanwhile the task's agent runs on; fix the file and taskd cancel stops it, or taskd rm --force removes the task and stops it."
)

// cancelRefused stops the job of task id, whose file tf taskd refuses
// (a rejection), if the file asks for a cancel: an edit that leaves a
// file taskd refuses does not stop the task's agent by itself (a slip,
// fixed a moment later, would cost the agent's work), but a cancel in it
// is heeded whatever else it says (docs/tasks.md#bad-files).
func (d *Daemon) cancelRefused(l *list, id string, e *entry, tf *taskfile.Task) {
	if e.job == nil {
		return
	}
	if cancel, _ := tf.Metadata.Object("taskd").Bool("cancel"); cancel {
		d.log.Info("cancel of a task whose file is rejected: its agent is stopped", "list", l.ID, "task", id)
		e.job.stop(agent.ErrCancelled)
	}
}

// writeRejection writes the note on file name of l (task id, or "" for a
// file that names no task) and logs its TaskRejected event.
func (d *Daemon) writeRejection(l *list, id, name, problem, fix string) {
	text := fmt.Sprintf("%s: %s\n\nHow to fix it: %s\n\ntaskd has not changed the file. It looks at it again as soon as it changes.\n",
		filepath.Join(l.Dir.Path(), name), problem, fix)
	path := rejectNote(l, noteName(name))
	if err := fsroot.WriteFile(l.Dir.Path(), path, []byte(text)); err != nil {
		d.log.Warn("write rejection", "path", path, "err", err)
	}
	l.Events.Append(eventlog.Event{Type: eventlog.TaskRejected, List: l.ID, Task: id,
		Data: map[string]any{"file": name, "error": problem, "fix": fix}})
	d.log.Warn("task rejected", "list", l.ID, "task", id, "file", name, "err", problem)
}

// clearReject removes a rejection once the file is acceptable (or no longer
// taskd's).
func (d *Daemon) clearReject(l *list, id string, e *entry) {
	if e.reject == "" {
		return
	}
	e.reject = ""
	fsroot.Remove(l.Dir.Path(), rejectPath(l, id))
	d.log.Info("task file fixed", "list", l.ID, "task", id)
}
