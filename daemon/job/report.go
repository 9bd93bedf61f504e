package job

import (
	"strings"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// The daemon's log says, at the info level, when a task's work starts and
// when the task ends (package daemon logs the end, seen in the file): one
// line each, and nothing while it is idle. This file holds the start.

// RecordStart records that the job's task t (claimed, with spec sp) starts
// its work: the TaskStarted event, with what ev adds (a workflow's step
// and name), and one line in the daemon's log. Callers call it once per
// attempt, after the claim is durable, when the attempt does something:
// its prompt commands run or its agent starts.
func (j *Job) RecordStart(t *taskfile.Task, sp task.Spec, ev eventlog.Event) {
	ev.Type, ev.Parent = eventlog.TaskStarted, sp.Parent
	j.Emit(ev)
	args := []any{"list", j.List.ID, "task", j.ID, "subject", LogSubject(j.ID, t.Subject)}
	if ev.Attempt > 0 {
		args = append(args, "attempt", ev.Attempt)
	}
	if wf, _ := t.Metadata.String("workflowType"); wf != "" {
		args = append(args, "workflow", wf)
	}
	if ev.Step != "" {
		args = append(args, "step", ev.Step)
	}
	j.Log.Info("task started", args...)
}

// logSubjectMax is how much of a subject a log line shows.
const logSubjectMax = 60

// LogSubject is the subject s of task id as a log line shows it: its
// first line, without the "#<id> " a workflow puts in front, cut to
// logSubjectMax characters (a cut marked with "…").
func LogSubject(id, s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.TrimPrefix(s, "#"+id+" ")
	if r := []rune(s); len(r) > logSubjectMax {
		s = string(r[:logSubjectMax-1]) + "…"
	}
	return s
}
