package flow

import (
	"strings"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// The step trace, metadata.taskd.stepTrace, is a workflow task's history
// (docs/workflows.md): one entry for every result applied to a step,
//
//	{"step": "verify", "result": "failed", "action": "retry", "attempt": 4}
//
// where attempt is the run folder of the step that produced the result. An
// answer by a person adds "by": "person" and, when one was given, the
// person's "note". Entries without a result are markers: a person's answer
// that did not move the task ({"action": "continue", "by": "person", "note":
// …}, at the loop guard), and a restart ({"action": "restart", "by":
// "person", "at": …}), written by taskd restart. The trace keeps the last
// maxTrace entries.

// maxTrace bounds metadata.taskd.stepTrace.
const maxTrace = 100

// Values of a trace entry's action besides the navigator's.
const (
	actionRestart  = "restart"  // a person restarted the workflow from its first step
	actionContinue = "continue" // a person let the loop guard go on
	byPerson       = "person"
)

// A traceEntry is one entry of the step trace.
type traceEntry struct {
	step, result, action, by, note string
	attempt                        int
}

// marker reports whether e records something other than a step's result.
func (e traceEntry) marker() bool { return e.result == "" }

// readTrace returns the step trace of t, oldest first.
func readTrace(t *taskfile.Task) []traceEntry {
	list := task.RecordOf(t).StepTrace
	out := make([]traceEntry, 0, len(list))
	for _, item := range list {
		o, ok := item.(*taskfile.Object)
		if !ok {
			continue
		}
		var e traceEntry
		e.step, _ = o.String("step")
		e.result, _ = o.String("result")
		e.action, _ = o.String("action")
		e.by, _ = o.String("by")
		e.note, _ = o.String("note")
		n, _ := o.Int("attempt")
		e.attempt = int(n)
		out = append(out, e)
	}
	return out
}

// sinceRestart returns the entries after the last restart marker.
func sinceRestart(trace []traceEntry) []traceEntry {
	for i := len(trace) - 1; i >= 0; i-- {
		if trace[i].action == actionRestart {
			return trace[i+1:]
		}
	}
	return trace
}

// appendTrace adds entry to the step trace in rec, keeping the last
// maxTrace entries.
func appendTrace(rec *task.Record, entry *taskfile.Object) {
	list := append(rec.StepTrace, entry)
	if len(list) > maxTrace {
		list = list[len(list)-maxTrace:]
	}
	rec.StepTrace = list
}

// traceLine renders the last n results of the step trace and the current
// step: "work → verify (failed) → work".
func traceLine(t *taskfile.Task, n int) string {
	var steps []traceEntry
	for _, e := range readTrace(t) {
		if !e.marker() {
			steps = append(steps, e)
		}
	}
	var parts []string
	if len(steps) > n {
		parts = append(parts, "…")
		steps = steps[len(steps)-n:]
	}
	for _, e := range steps {
		step := e.step
		if e.result == "failed" {
			step += " (failed)"
		}
		parts = append(parts, step)
	}
	if s := currentStep(t); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, " → ")
}

// lastTrace returns the last result in the step trace (markers skipped).
func lastTrace(t *taskfile.Task) traceEntry {
	trace := readTrace(t)
	for i := len(trace) - 1; i >= 0; i-- {
		if !trace[i].marker() {
			return trace[i]
		}
	}
	return traceEntry{}
}

// personEntry is the trace entry of a person's answer: result and action
// are empty for a marker.
func personEntry(step, result, action, note string) *taskfile.Object {
	e := taskfile.NewObject()
	e.Set("step", step)
	if result != "" {
		e.Set("result", result)
	}
	e.Set("action", action)
	e.Set("by", byPerson)
	if note != "" {
		e.Set("note", note)
	}
	return e
}

// takeNote removes a person's note (metadata.taskd.resolveNote) from m and
// returns it.
func takeNote(m *taskfile.Object) string {
	note, _ := m.String("resolveNote")
	m.Delete("resolveNote")
	return strings.TrimSpace(note)
}
