package plain

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/chain"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Bounds of a failed attempt's report in the next attempt's prompt.
const (
	retryText   = 1 << 10
	retryOutput = 4 << 10
	retryStderr = 2 << 10
)

// feedback is what an attempt is told of the ones before it, for its
// prompt: a retry of a failed attempt gets that attempt's report; a loop's
// iteration gets the check of the one before (chain.IterationFeedback);
// and a person's note given with an answer (metadata.taskd.resolveNote)
// is passed on. Empty when there is nothing to tell.
func feedback(l *job.List, t *taskfile.Task, sp task.Spec) string {
	var parts []string
	if s := retryFeedback(l, t, sp); s != "" {
		parts = append(parts, s)
	}
	if s := chain.IterationFeedback(l, t); s != "" {
		parts = append(parts, s)
	}
	if s := personNote(t); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}

// personNote is the note a person gave with their answer
// (metadata.taskd.resolveNote) as an attempt is told it; "" for none.
func personNote(t *taskfile.Task) string {
	note, _ := t.Metadata.Object("taskd").String("resolveNote")
	if note = strings.TrimSpace(note); note == "" {
		return ""
	}
	return "## Directions from a person\n\nGiven with their answer; follow them in this attempt:\n\n" + note + "\n"
}

// retryFeedback reports the failed attempt a retry follows: an automatic
// retry (metadata.taskd.retries: failures counted) or a handoff's
// (metadata.taskd.retryOf, the attempt it retries), when that attempt is
// the last one recorded and it failed.
func retryFeedback(l *job.List, t *taskfile.Task, sp task.Spec) string {
	rec := task.RecordOf(t)
	r := rec.Result
	if ok, isBool := r.Bool("success"); !isBool || ok {
		return ""
	}
	rel, _ := r.String("runDir")
	n, err := strconv.Atoi(filepath.Base(rel))
	if err != nil || n < 1 || n >= sp.Attempt {
		return ""
	}
	if sp.Failures == 0 && rec.RetryOf != n {
		return ""
	}
	dir := l.RunDir(t.ID, n)
	res, _ := agent.ReadResult(dir)
	var b strings.Builder
	fmt.Fprintf(&b, "## Before this attempt\n\nThis is attempt %d of this task; attempt %d failed, and this one tries again. Address what went wrong:\n\n", sp.Attempt, n)
	if res.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n\n", agent.Truncate(res.Summary, retryText))
	}
	if res.Error != "" && (res.Summary == "" || !strings.Contains(res.Error, res.Summary)) {
		fmt.Fprintf(&b, "Error: %s\n\n", agent.Truncate(res.Error, retryText))
	}
	out := strings.TrimSpace(res.Output)
	if out == "" {
		data, _ := agent.ReadTail(l.Path(), filepath.Join(dir, "stdout.log"), retryOutput)
		out = strings.TrimSpace(string(data))
	}
	if out != "" && out != res.Summary {
		fmt.Fprintf(&b, "The end of its output:\n\n%s\n\n", agent.Fence(agent.TailOf(out, retryOutput)))
	}
	data, _ := agent.ReadTail(l.Path(), filepath.Join(dir, "stderr.log"), retryStderr)
	if errText := strings.TrimSpace(string(data)); errText != "" {
		fmt.Fprintf(&b, "The end of its standard error:\n\n%s\n\n", agent.Fence(errText))
	}
	return b.String()
}
