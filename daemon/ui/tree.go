package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/status"
	tt "github.com/taskd/taskd/internal/termtext"
)

// This file draws the tree: a heading, then the rows that fit, from the
// first one shown. A row is the cursor (">"), a mark ("!" on a task that
// needs a person and on every list and task above it), the task's place in
// the tree and id, its state, a workflow's step, the attempt, its age and
// its subject; under a running agent, its progress.

// columns are the widths of a tree's columns; the subject takes the rest.
type columns struct{ id, state, step, att, age, subject int }

// columnsFor lays out a tree w columns wide.
func columnsFor(w int) columns {
	c := columns{id: 10, state: 11, att: 3, age: 4}
	switch {
	case w >= 110:
		c.id, c.step = 16, 16
	case w >= 90:
		c.id, c.step = 14, 12
	case w >= 76:
		c.step = 10
	}
	c.subject = max(w-(3+c.id+1+c.state+1+c.step+1+c.att+1+c.age+2), 0)
	return c
}

// tree draws the tree in a.
func (m *Model) tree(a region) []string {
	c := columnsFor(a.w)
	lines := []string{m.paintIf("2", strings.TrimRight(c.cells("  ", rowCells{"ID", tt.Pad("STATE", c.state), "STEP", "ATT", "AGE", "SUBJECT"}), " "))}
	if len(m.rows) == 0 {
		lines = append(lines, "", "   No task lists in "+m.path(m.opt.Root)+" yet: 'taskd submit' writes one.")
	}
	for i := m.top; i < len(m.rows) && len(lines) < a.h; i++ {
		lines = append(lines, m.treeRow(&m.rows[i], i == m.cursor, c, a.w))
	}
	return lines
}

func (m *Model) paintIf(code, s string) string { return paint(m.opt.Color, code, s) }

// rowCells are the cells of one row of the tree, as written; state is
// padded (and painted) already.
type rowCells struct {
	id, state, step, att, age, subject string
}

// cells lays out row r after lead (the cursor and the row's mark).
func (c columns) cells(lead string, r rowCells) string {
	var b strings.Builder
	b.WriteString(lead + " ")
	b.WriteString(tt.Pad(tt.Fit(r.id, c.id), c.id) + " " + r.state + " ")
	if c.step > 0 {
		b.WriteString(tt.Pad(tt.Fit(r.step, c.step), c.step) + " ")
	}
	b.WriteString(tt.PadLeft(r.att, c.att) + " " + tt.PadLeft(r.age, c.age) + "  " + tt.Fit(r.subject, c.subject))
	return b.String()
}

// treeRow draws row r, w columns wide.
func (m *Model) treeRow(r *row, selected bool, c columns, w int) string {
	cursor, mark := " ", " "
	if selected {
		cursor = ">"
	}
	if r.person {
		mark = "!"
	}
	var line string
	switch r.kind {
	case listRow:
		fold := "▾ "
		if r.folded > 0 {
			fold = "▸ "
		}
		n := len(r.list.Tasks)
		text := fold + tt.Clean(r.list.ID) + " · " + fmt.Sprintf("%d %s", n, status.Plural(n, "task", "tasks"))
		if r.counts != "" {
			text += ": " + r.counts
		}
		if r.list.Paused != nil {
			text += " · " + pausedListWords(r.list.Paused)
		}
		line = tt.Fit(cursor+mark+" "+text, w)
		if !selected {
			line = m.paintIf("1", line)
		}
	case progressRow:
		indent := strings.Repeat(" ", 3+c.id+1)
		line = indent + tt.Fit("↳ "+progressWords(r.task, m.now), w-len(indent))
		if !selected {
			line = m.paintIf("2", line)
		}
	default:
		t := r.task
		state := status.StateWord(t)
		word := tt.Fit(state, c.state)
		stateCell := word + strings.Repeat(" ", c.state-tt.Width(word))
		if !selected {
			stateCell = m.paintIf(status.StateColors[state], word) + strings.Repeat(" ", c.state-tt.Width(word))
		}
		att := ""
		if t.Attempt > 0 {
			att = fmt.Sprint(t.Attempt)
		}
		step := t.Step
		if count := status.StepCount(t); count != "" {
			step = tt.FitWidth(tt.Clean(t.Step), max(c.step-tt.Width(count), 3)) + count
		}
		subject := status.Subject(t)
		if r.folded > 0 {
			subject = fmt.Sprintf("(+%d below) %s", r.folded, subject)
		}
		if !selected && r.person {
			mark = m.paintIf(status.StateColors["needs_human"], mark)
		}
		line = strings.TrimRight(c.cells(cursor+mark, rowCells{r.lead + t.ID, stateCell, step, att, status.Age(m.now, t.Since), subject}), " ")
	}
	if selected && m.opt.Color {
		line = paint(true, "7", pad(line, w))
	}
	return line
}

// progressWords says what a running agent has done so far: "turn 3 · Edit
// a.go · 12.3k tokens · $0.04 · $0.01/min".
func progressWords(t *status.Task, now time.Time) string {
	p := t.Progress
	if p == nil {
		return ""
	}
	parts := []string{fmt.Sprintf("turn %d", p.Turns)}
	if p.LastTool != "" {
		parts = append(parts, tt.Clean(p.LastTool))
	}
	parts = append(parts, status.Tokens(p.Tokens)+" tokens")
	parts = append(parts, status.Dollars(p.CostUSD, p.Estimated))
	if mins := now.Sub(t.Since).Minutes(); !t.Since.IsZero() && mins >= 0.25 {
		parts = append(parts, fmt.Sprintf("$%.2f/min", p.CostUSD/mins))
	}
	return strings.Join(parts, " · ")
}
