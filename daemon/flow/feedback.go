package flow

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/navigator"
)

// Bounds of a failed step's report in the next prompt.
const (
	reportText   = 1 << 10 // summary, error
	reportOutput = 4 << 10 // the end of its output
	reportStderr = 2 << 10 // the end of its standard error
)

// feedback is the part of a step's prompt that says what happened since
// the step last ran, read from the step trace (since the last restart):
// which attempt of the step this is; the report of the step that failed
// and led here (its summary and error, and the ends of its output and
// standard error, bounded), when the last step that ran failed; and the
// directions a person gave with their answers since then. It is empty for
// a step's first attempt that follows no failure and no note.
func (f *flowRun) feedback(step string) string {
	trace := sinceRestart(readTrace(f.t))
	attempt := 1
	for _, e := range trace {
		if e.step == step && !e.marker() && (e.by != byPerson || e.attempt > 0) {
			attempt++ // a run of the step (a person may have given its verdict)
		}
	}
	var notes []traceEntry
	var failed *traceEntry
	for i := len(trace) - 1; i >= 0; i-- {
		e := trace[i]
		if e.by == byPerson {
			if e.note != "" {
				notes = append([]traceEntry{e}, notes...)
			}
			if e.attempt == 0 {
				continue // an answer that ran nothing; else the verdict on a step's run
			}
		}
		if e.marker() {
			continue
		}
		if e.result == "failed" {
			failed = &e
		}
		break
	}
	if failed == nil && len(notes) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Before this attempt\n\nThis is attempt %d of this step.", attempt)
	if failed != nil {
		b.WriteString(" " + f.failureReport(*failed))
	}
	b.WriteString("\n\n")
	for _, n := range notes {
		fmt.Fprintf(&b, "### Directions from a person\n\nGiven with the answer %q at %s; follow them in this step:\n\n%s\n\n", answerOf(n), n.step, n.note)
	}
	return b.String()
}

func answerOf(e traceEntry) string {
	if e.result != "" {
		return e.result
	}
	return e.action
}

// failureReport is what the next step is told of failed step e: which step
// and run, and its result as its run folder keeps it.
func (f *flowRun) failureReport(e traceEntry) string {
	var b strings.Builder
	what := e.step
	var node *navigator.Node
	if wf := f.workflow(); wf != nil {
		node = wf.Node(e.step)
	}
	if node != nil && node.Name != "" {
		what = fmt.Sprintf("%q (%s)", node.Name, e.step)
	}
	if node != nil && node.Type == navigator.TypeFork {
		fmt.Fprintf(&b, "Its branches at %s did not pass, and the workflow sent the task here.", what)
		return b.String()
	}
	fmt.Fprintf(&b, "The step %s failed on its run %d, and the workflow sent the task here. Address what it reported:\n\n", what, e.attempt)
	runDir := f.l.RunDir(f.id, e.attempt)
	res, ok := agent.ReadResult(runDir)
	if !ok {
		b.WriteString("(its run left no result)")
		return strings.TrimRight(b.String(), "\n")
	}
	if res.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n\n", agent.Truncate(res.Summary, reportText))
	}
	if res.Error != "" && (res.Summary == "" || !strings.Contains(res.Error, res.Summary)) {
		fmt.Fprintf(&b, "Error: %s\n\n", agent.Truncate(res.Error, reportText))
	}
	if node != nil && node.Command != "" {
		fmt.Fprintf(&b, "The command `%s` exited with status %d.\n\n", node.Command, res.ExitCode)
	}
	out := res.Output
	if out == "" {
		data, _ := agent.ReadTail(f.l.Path(), filepath.Join(runDir, "stdout.log"), reportOutput)
		out = string(data)
	}
	if out = strings.TrimSpace(out); out != "" && out != res.Summary {
		fmt.Fprintf(&b, "The end of its output:\n\n%s\n\n", agent.Fence(agent.TailOf(out, reportOutput)))
	}
	data, _ := agent.ReadTail(f.l.Path(), filepath.Join(runDir, "stderr.log"), reportStderr)
	if errText := strings.TrimSpace(string(data)); errText != "" {
		fmt.Fprintf(&b, "The end of its standard error:\n\n%s\n\n", agent.Fence(errText))
	}
	fmt.Fprintf(&b, "(The whole run is in %s.)", filepath.Join(".taskd", "runs", f.id, fmt.Sprint(e.attempt)))
	return b.String()
}
