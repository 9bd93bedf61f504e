package ui

import (
	"fmt"
	"strings"

	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	tt "github.com/taskd/taskd/internal/termtext"
)

// This file draws the screen: a heading (the root, the daemon, the
// totals), the tree, the selected row's detail (beside the tree on a wide
// terminal, under it on a narrow one), and a line of keys or of what the
// last action did. Every line fits the width; nothing but what the
// terminal shows is drawn.

// wideAt is the width from which the detail goes beside the tree.
const wideAt = 120

// A layout is where the parts of the screen go.
type layout struct {
	head   int // lines of heading
	tree   region
	detail region
	wide   bool // the detail is beside the tree, not under it
}

// A region is a part of the screen, its lines and columns.
type region struct{ h, w int }

func (m *Model) layout() layout {
	l := layout{head: 2}
	body := m.height - l.head - 1 // less the heading and the line of keys
	if m.width >= wideAt {
		l.wide = true
		l.tree = region{h: body, w: min(m.width*11/20, 110)}
		l.detail = region{h: body, w: m.width - l.tree.w - 1}
		return l
	}
	l.tree = region{h: max(body*9/20, min(body, 4)), w: m.width}
	l.detail = region{h: body - l.tree.h, w: m.width}
	return l
}

// View draws the screen.
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	d := &drawing{color: m.opt.Color}
	if m.snap == nil {
		d.add("taskd ui · reading " + m.path(m.opt.Root) + " …")
		return d.string(m.width, m.height)
	}
	l := m.layout()
	m.heading(d)
	var tree, detail []string
	if m.mode == helping {
		tree = m.help(m.width, l.tree.h+l.detail.h)
		if l.wide {
			tree = m.help(m.width, l.tree.h)
		}
	} else {
		tree = m.tree(l.tree)
		detail = m.detailPane(l.detail)
	}
	if l.wide && m.mode != helping {
		for i := 0; i < l.tree.h; i++ {
			d.add(pad(at(tree, i), l.tree.w) + d.paint("2", "│") + at(detail, i))
		}
	} else {
		d.lines = append(d.lines, tree...)
		d.lines = append(d.lines, detail...)
	}
	for len(d.lines) < m.height-1 {
		d.add("")
	}
	d.lines = d.lines[:m.height-1]
	d.add(m.footer())
	return d.string(m.width, m.height)
}

// at returns lines[i], or "" past the end.
func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// A drawing is lines being drawn.
type drawing struct {
	lines []string
	color bool
}

func (d *drawing) add(s string) { d.lines = append(d.lines, s) }

// paint wraps s in the ANSI colour code (none without colour).
func (d *drawing) paint(code, s string) string { return paint(d.color, code, s) }

func paint(color bool, code, s string) string {
	if !color || code == "" || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// string joins the lines, height of them at most.
func (d *drawing) string(width, height int) string {
	if len(d.lines) > height {
		d.lines = d.lines[:height]
	}
	return strings.Join(d.lines, "\n")
}

// pad fills s, which may be painted, with spaces to n columns.
func pad(s string, n int) string {
	if w := tt.Width(stripANSI(s)); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}

// stripANSI removes the colour codes paint puts in.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 {
			return b.String()
		}
		s = s[i+j+1:]
	}
}

// heading draws the root, whether a daemon serves it, and the totals.
func (m *Model) heading(d *drawing) {
	s := m.snap
	state, code := "no daemon running", "33;1"
	switch {
	case s.daemon.Err != "":
		state, code = "daemon state unknown", "33"
	case s.daemon.Running && s.daemon.PID > 0:
		state, code = fmt.Sprintf("daemon running (pid %d)", s.daemon.PID), "32"
	case s.daemon.Running:
		state, code = "daemon running", "32"
	}
	right := "? help · q quit"
	left := "taskd · "
	root := tt.FitLeft(tt.Clean(m.path(m.opt.Root)), max(m.width-tt.Width(left+state+right)-6, 12))
	line := d.paint("1", left+root) + " · " + d.paint(code, state)
	if gap := m.width - tt.Width(left+root+" · "+state) - tt.Width(right); gap >= 2 {
		line += strings.Repeat(" ", gap) + d.paint("2", right)
	}
	d.add(line)
	d.add(m.totals(d))
}

// totals says how many tasks run, wait, need a person and failed, and
// what else the person should know of the root at once.
func (m *Model) totals(d *drawing) string {
	var running, waiting, person, failed, heldN int
	for i := range m.snap.lists {
		for k := range m.snap.lists[i].Tasks {
			switch status.StateWord(&m.snap.lists[i].Tasks[k]) {
			case string(task.Running):
				running++
			case string(task.Waiting):
				waiting++
			case string(task.NeedsHuman):
				person++
			case string(task.Failed), string(task.TimedOut), string(task.Stopped):
				failed++
			case "held":
				heldN++
			}
		}
	}
	parts := []string{
		d.paint(status.StateColors["running"], fmt.Sprintf("%d running", running)),
		d.paint(status.StateColors["waiting"], fmt.Sprintf("%d waiting", waiting)),
		d.paint(status.StateColors["needs_human"], fmt.Sprintf("%d %s a person", person, status.Plural(person, "needs", "need"))),
		d.paint(status.StateColors["failed"], fmt.Sprintf("%d failed", failed)),
	}
	if heldN > 0 {
		parts = append(parts, d.paint(status.StateColors["held"], fmt.Sprintf("%d held", heldN)))
	}
	line := strings.Join(parts, " · ")
	var notes []string
	if why := m.snap.failed[""]; why != "" {
		notes = append(notes, "the root cannot be read: "+why)
	}
	if m.snap.problem != "" {
		notes = append(notes, m.snap.problem)
	}
	if len(notes) > 0 {
		rest := m.width - tt.Width(stripANSI(line)) - 3
		line += " · " + d.paint("31", tt.Fit(strings.Join(notes, "; "), rest))
	}
	return line
}

// path shows p with the home directory as ~.
func (m *Model) path(p string) string {
	if h := m.opt.Home; h != "" && (p == h || strings.HasPrefix(p, h+"/")) {
		return "~" + p[len(h):]
	}
	return p
}
