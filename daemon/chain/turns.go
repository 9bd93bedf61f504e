package chain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// maxTurn bounds each turn $TURN quotes (its end is kept).
const maxTurn = 8 << 10

// A turn is one ended attempt in a task's conversation: who spoke, when it
// ended, and what it said (its agent's final text, else its summary).
type turn struct {
	who  string
	end  time.Time
	text string
}

// conversation returns the turns task t's prompt can quote with $TURN,
// newest first: every ended attempt of t itself before attempt (a loop's
// earlier iterations), of its parent, of its siblings (the tasks with the
// same parent: parallel items, pushed children, return chains; for a
// top-level task, none), and of the tasks before it in its return chain.
// taskd keeps no chat: these are what the run folders hold.
func conversation(l *job.List, t *taskfile.Task, attempt int) []turn {
	m := t.Metadata.Object("taskd")
	parent, _ := m.String("parent")
	var out []turn
	add := func(c *taskfile.Task, who string, below int) {
		n := task.RecordOf(c).Attempt
		for a := 1; a <= n && (below == 0 || a < below); a++ {
			res, ok := agent.ReadResult(l.RunDir(c.ID, a))
			if !ok || res.StartedAt == nil {
				continue
			}
			text := strings.TrimSpace(res.Output)
			if text == "" {
				text = res.Summary
			}
			end := res.StartedAt.Add(time.Duration(res.DurationMs) * time.Millisecond)
			out = append(out, turn{who: fmt.Sprintf("%s, attempt %d", who, a), end: end, text: agent.TailOf(text, maxTurn)})
		}
	}
	add(t, "this task", attempt)
	if parent != "" {
		if p, err := l.Dir.Read(parent); err == nil {
			add(p, "task "+parent+" (the parent)", 0)
		}
	}
	ids, _ := l.Dir.List()
	chain := returnChain(l, t)
	for _, id := range ids {
		c, err := l.Dir.Read(id)
		if err != nil || id == t.ID {
			continue
		}
		if p, _ := c.Metadata.Object("taskd").String("parent"); parent != "" && p == parent || chain[id] {
			who := "task " + id
			if name := resultName(c); name != "" {
				who += " (" + name + ")"
			}
			add(c, who, 0)
		}
	}
	slices.SortStableFunc(out, func(a, b turn) int { return b.end.Compare(a.end) })
	return out
}

// SubstituteTurns replaces every $TURN[…] in the prompt text of task t,
// which runs attempt attempt, with the turns it selects from t's
// conversation: each as a block headed "--- who ---", oldest first for
// $TURN[n] and $TURN[*], in the order written for $TURN[:i:j]. Turns that
// do not exist are left out; a selection of none is "(no earlier turns)".
func SubstituteTurns(l *job.List, t *taskfile.Task, attempt int, text string) (string, error) {
	if !prompt.HasTurns(text) {
		return text, nil
	}
	conv := conversation(l, t, attempt)
	return prompt.SubstituteTurns(text, func(sel prompt.TurnSelection) string {
		var picked []turn
		switch {
		case sel.All:
			picked = slices.Clone(conv)
			slices.Reverse(picked)
		case len(sel.Pick) > 0:
			for _, n := range sel.Pick {
				if n <= len(conv) {
					picked = append(picked, conv[n-1])
				}
			}
		default:
			picked = slices.Clone(conv[:min(sel.Last, len(conv))])
			slices.Reverse(picked)
		}
		if len(picked) == 0 {
			return "(no earlier turns)"
		}
		var b strings.Builder
		for i, tn := range picked {
			if i > 0 {
				b.WriteString("\n\n")
			}
			fmt.Fprintf(&b, "--- %s ---\n%s", tn.who, tn.text)
		}
		return b.String()
	})
}

// returnChain returns the ids of the tasks before t in its return chain
// (metadata.taskd.previous links, back to the task it returns from).
func returnChain(l *job.List, t *taskfile.Task) map[string]bool {
	out := map[string]bool{}
	m := t.Metadata.Object("taskd")
	returnOf, _ := m.String("returnOf")
	for prev, _ := m.String("previous"); returnOf != "" && prev != "" && !out[prev] && prev != t.ID; {
		out[prev] = true
		if prev == returnOf {
			break
		}
		pt, err := l.Dir.Read(prev)
		if err != nil {
			break
		}
		prev, _ = pt.Metadata.Object("taskd").String("previous")
	}
	return out
}
