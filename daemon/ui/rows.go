package ui

import (
	"strings"

	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
)

// This file holds the rows of the tree: one per list, one per task shown
// (its children under it, unless folded), and one under each running
// task with its agent's progress. The rows are built once per snapshot;
// a screen draws only those that fit (the rows are virtual: 10,000 tasks
// cost one small row each, and drawing costs what the screen holds).

type rowKind uint8

const (
	listRow rowKind = iota
	taskRow
	progressRow // the progress of the running task above it
)

type row struct {
	kind   rowKind
	list   *status.List
	task   *status.Task // nil for a list row
	lead   string       // the tree's lines before the task's id
	person bool         // it, or a task below it, needs a person
	folded int          // the tasks below it that are folded away
	counts string       // a list's tasks counted by state
}

// A tally counts the tasks of every list by what the heading shows.
type tally struct{ running, waiting, person, failed, held int }

func (c *tally) add(t *status.Task) {
	switch status.StateWord(t) {
	case string(task.Running):
		c.running++
	case string(task.Waiting):
		c.waiting++
	case string(task.NeedsHuman):
		c.person++
	case string(task.Failed), string(task.TimedOut), string(task.Stopped):
		c.failed++
	case "held":
		c.held++
	}
}

func (r *row) key() key {
	if r.task == nil {
		return key{r.list.ID, ""}
	}
	return key{r.list.ID, r.task.ID}
}

// selectable reports whether the cursor stops at r.
func (r *row) selectable() bool { return r.kind != progressRow }

// needsPerson reports whether t waits for a person's answer.
func needsPerson(t *status.Task) bool {
	return status.StateWord(t) == string(task.NeedsHuman)
}

// personBelow reports whether a task below t needs a person.
func personBelow(t *status.Task) bool {
	for _, b := range t.Below {
		if b.State == string(task.NeedsHuman) {
			return true
		}
	}
	return false
}

// rebuild makes the rows of the snapshot, keeping the selection on the
// same list or task where it is still there, else on the row at the same
// place.
func (m *Model) rebuild() {
	m.rows = m.rows[:0]
	m.tally = tally{}
	clear(m.index)
	for i := range m.snap.lists {
		l := &m.snap.lists[i]
		lk := key{l.ID, ""}
		lr := row{kind: listRow, list: l, counts: strings.Join(status.StateCounts(l.Tasks), ", ")}
		for k := range l.Tasks {
			m.tally.add(&l.Tasks[k])
			lr.person = lr.person || needsPerson(&l.Tasks[k])
		}
		m.index[lk] = len(m.rows)
		if m.folded[lk] {
			lr.folded = len(l.Tasks)
			m.rows = append(m.rows, lr)
			continue
		}
		m.rows = append(m.rows, lr)
		status.Walk(l, func(t *status.Task, lead string) bool {
			r := row{kind: taskRow, list: l, task: t, lead: lead, person: needsPerson(t) || personBelow(t)}
			open := !m.folded[key{l.ID, t.ID}]
			if !open {
				r.folded = len(t.Children)
			}
			m.index[key{l.ID, t.ID}] = len(m.rows)
			m.rows = append(m.rows, r)
			if t.Progress != nil && t.State == string(task.Running) {
				m.rows = append(m.rows, row{kind: progressRow, list: l, task: t, lead: lead})
			}
			return open
		})
	}
	if i, ok := m.index[m.sel]; ok {
		m.cursor = i
	} else {
		m.cursor = min(m.cursor, len(m.rows)-1)
		m.cursor = max(m.cursor, 0)
		m.settle(-1)
	}
	if r := m.selected(); r != nil {
		m.sel = r.key()
	} else {
		m.sel = key{}
	}
	m.scroll()
}

// settle moves the cursor from a row it does not stop at, in direction
// dir (-1 up, +1 down), or the other way at an end.
func (m *Model) settle(dir int) {
	for _, d := range []int{dir, -dir} {
		for i := m.cursor; i >= 0 && i < len(m.rows); i += d {
			if m.rows[i].selectable() {
				m.cursor = i
				return
			}
		}
	}
}

// move moves the cursor n selectable rows down (up for n < 0), stopping
// at the ends.
func (m *Model) move(n int) {
	dir := 1
	if n < 0 {
		dir, n = -1, -n
	}
	for ; n > 0; n-- {
		i := m.cursor + dir
		for i >= 0 && i < len(m.rows) && !m.rows[i].selectable() {
			i += dir
		}
		if i < 0 || i >= len(m.rows) {
			break
		}
		m.cursor = i
	}
	m.selectCursor()
}

// moveTo moves the cursor to row i.
func (m *Model) moveTo(i int) {
	if len(m.rows) == 0 {
		return
	}
	m.cursor = max(min(i, len(m.rows)-1), 0)
	m.settle(1)
	m.selectCursor()
}

// selectCursor makes the row at the cursor the selection, and scrolls it
// into view.
func (m *Model) selectCursor() {
	if r := m.selected(); r != nil {
		m.sel = r.key()
	}
	m.scroll()
}

// nextPerson moves the cursor to the next task (after the cursor, around
// the end) that needs a person; it reports whether there is one.
func (m *Model) nextPerson() bool {
	for k := 1; k <= len(m.rows); k++ {
		i := (m.cursor + k) % len(m.rows)
		if r := m.rows[i]; r.kind == taskRow && needsPerson(r.task) {
			m.moveTo(i)
			return true
		}
	}
	return false
}

// fold folds (open false) or opens the selected list or task; folding
// one that is folded, or has nothing below it, moves to its parent.
func (m *Model) fold(open bool) {
	r := m.selected()
	if r == nil {
		return
	}
	k := r.key()
	hasBelow := r.task == nil || len(r.task.Children) > 0
	switch {
	case open && m.folded[k]:
		delete(m.folded, k)
	case !open && hasBelow && !m.folded[k]:
		m.folded[k] = true
	case !open && r.task != nil:
		parent := key{k.list, r.task.Parent}
		if _, ok := m.index[parent]; !ok || r.task.Parent == "" {
			parent = key{k.list, ""}
		}
		m.sel = parent
	default:
		return
	}
	m.rebuild()
}

// treeHeight is how many rows the tree shows.
func (m *Model) treeHeight() int { return m.layout().tree.h - 1 } // less its heading

// scroll keeps the cursor's row (and the progress under it) in view.
func (m *Model) scroll() {
	h := m.treeHeight()
	if h <= 0 {
		return
	}
	last := m.cursor
	if last+1 < len(m.rows) && m.rows[last+1].kind == progressRow {
		last++
	}
	if m.cursor < m.top {
		m.top = m.cursor
	}
	if last >= m.top+h {
		m.top = last - h + 1
	}
	m.top = max(min(m.top, len(m.rows)-h), 0)
}
