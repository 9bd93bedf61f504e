package chain

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Bounds of what an iteration is told of the check before it.
const (
	checkAnswer = 2 << 10 // the judge's answer, the command's output
	checkStderr = 1 << 10 // the command's standard error
)

// IterationFeedback is what a loop's iteration is told of the one before
// it, for its prompt: which iteration it is of the maximum and, when a
// condition was checked, why the loop goes on — the judge's answer (until),
// or how the condition command ended (untilCommand), as the previous
// iteration's run folder keeps them. It is empty for a task that does not
// loop and for a loop's first iteration.
func IterationFeedback(l *job.List, t *taskfile.Task) string {
	done := task.RecordOf(t).LoopIteration
	ov, err := Overrides(t)
	if err != nil || ov.Loop == nil || done == 0 {
		return ""
	}
	lp := ov.Loop
	var b strings.Builder
	fmt.Fprintf(&b, "## Before this iteration\n\nThis is iteration %d of at most %d of this task.", done+1, lp.Max)
	prev := previousRun(l, t)
	switch {
	case lp.Until != "":
		fmt.Fprintf(&b, " After iteration %d its condition was checked, and it does not hold yet:\n\n<user-condition>\n%s\n</user-condition>\n\n", done, lp.Until)
		if answer := judgeAnswer(l, prev); answer != "" {
			fmt.Fprintf(&b, "The judge said:\n\n%s\n\n", agent.Fence(answer))
		}
	case lp.UntilCommand != "" && prev != "":
		res, _ := agent.ReadResult(filepath.Join(prev, "until"))
		fmt.Fprintf(&b, " After iteration %d its condition command `%s` exited with status %d, so the loop goes on.\n\n", done, lp.UntilCommand, res.ExitCode)
		if out := strings.TrimSpace(res.Output); out != "" {
			fmt.Fprintf(&b, "The end of its output:\n\n%s\n\n", agent.Fence(agent.TailOf(out, checkAnswer)))
		}
		data, _ := agent.ReadTail(l.Path(), filepath.Join(prev, "until", "stderr.log"), checkStderr)
		if errText := strings.TrimSpace(string(data)); errText != "" {
			fmt.Fprintf(&b, "The end of its standard error:\n\n%s\n\n", agent.Fence(errText))
		}
	default:
		b.WriteString("\n\n")
	}
	return b.String()
}

// previousRun returns the run folder of the task's last recorded attempt
// (metadata.taskd.result.runDir), or "".
func previousRun(l *job.List, t *taskfile.Task) string {
	rel, _ := task.RecordOf(t).Result.String("runDir")
	n, err := strconv.Atoi(filepath.Base(rel))
	if err != nil || n < 1 {
		return ""
	}
	return l.RunDir(t.ID, n)
}

// judgeAnswer returns the last judge's answer in run folder dir (the
// retry's, if the first judge failed), without its verdict, bounded.
func judgeAnswer(l *job.List, dir string) string {
	if dir == "" {
		return ""
	}
	for _, sub := range []string{"judge-retry", "judge"} {
		res, ok := agent.ReadResult(filepath.Join(dir, sub))
		if !ok {
			continue
		}
		text := res.Output
		if text == "" {
			data, _ := agent.ReadTail(l.Path(), filepath.Join(dir, sub, "stdout.log"), checkAnswer)
			text = string(data)
		}
		text = strings.TrimSpace(loopVerdict.ReplaceAllString(text, ""))
		return agent.TailOf(text, checkAnswer)
	}
	return ""
}
