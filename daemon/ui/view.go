package ui

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/status"
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
	l := layout{head: 1 + len(m.totals(&drawing{}))}
	body := m.height - l.head - 1 // less the heading and the line of keys
	if m.width >= wideAt {
		l.wide = true
		l.tree = region{h: body, w: min(m.width*11/20, 110)}
		l.detail = region{h: body, w: m.width - l.tree.w - 1}
		return l
	}
	// The tree takes what it needs, up to a little more than half; the
	// detail the rest.
	l.tree = region{h: max(min(len(m.rows)+1, body*11/20), min(body, 5)), w: m.width}
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

// A span is a part of a line and the colour it is painted in.
type span struct{ text, code string }

// joinFit joins spans with sep into a line of at most w columns: the
// spans that fit, then the first that does not, cut with "…", and none
// after it.
func (d *drawing) joinFit(spans []span, sep string, w int) string {
	var b strings.Builder
	used := 0
	for i, s := range spans {
		if i > 0 {
			if used+tt.Width(sep) >= w {
				break
			}
			b.WriteString(sep)
			used += tt.Width(sep)
		}
		text := tt.Fit(s.text, w-used)
		b.WriteString(d.paint(s.code, text))
		used += tt.Width(text)
		if text != tt.Clean(s.text) {
			break
		}
	}
	return b.String()
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
	left := "taskd · " + tt.FitLeft(tt.Clean(m.path(m.opt.Root)), max(m.width/2, 12))
	const right = "? help · q quit"
	line := d.joinFit([]span{{left, "1"}, {state, code}}, " · ", m.width)
	if gap := m.width - tt.Width(left+" · "+state+right); gap >= 2 {
		line += strings.Repeat(" ", gap) + d.paint("2", right)
	}
	d.add(line)
	d.lines = append(d.lines, m.totals(d)...)
}

// totals says how many tasks run, wait, need a person and failed, what
// the agents cost today, which profiles are paused, and what else the
// person should know of the root at once: one line, or two when that is
// too narrow.
func (m *Model) totals(d *drawing) []string {
	if m.snap == nil {
		return nil
	}
	c := m.tally
	spans := []span{
		{fmt.Sprintf("%d running", c.running), status.StateColors["running"]},
		{fmt.Sprintf("%d waiting", c.waiting), status.StateColors["waiting"]},
		{fmt.Sprintf("%d %s a person", c.person, status.Plural(c.person, "needs", "need")), status.StateColors["needs_human"]},
		{fmt.Sprintf("%d failed", c.failed), status.StateColors["failed"]},
	}
	if c.held > 0 {
		spans = append(spans, span{fmt.Sprintf("%d held", c.held), status.StateColors["held"]})
	}
	if spent := costWords(m.snap.costs); spent != "" {
		spans = append(spans, span{spent, ""})
	}
	if paused := pausedWords(m.snap.pauses, m.now); paused != "" {
		spans = append(spans, span{paused, status.StateColors["paused"]})
	}
	if why := m.snap.failed[""]; why != "" {
		spans = append(spans, span{"the root cannot be read: " + why, "31"})
	}
	if m.snap.problem != "" {
		spans = append(spans, span{m.snap.problem, "31"})
	}
	width := 0
	for i, s := range spans {
		width += tt.Width(s.text) + 3*min(i, 1)
		if width > m.width && i > 0 && m.height >= 16 {
			return []string{d.joinFit(spans[:i], " · ", m.width), d.joinFit(spans[i:], " · ", m.width)}
		}
	}
	return []string{d.joinFit(spans, " · ", m.width)}
}

// path shows p with the home directory as ~.
func (m *Model) path(p string) string {
	if h := m.opt.Home; h != "" && (p == h || strings.HasPrefix(p, h+"/")) {
		return "~" + p[len(h):]
	}
	return p
}

// costWords says what the agents cost today: "today $1.23: claude $1.20,
// codex $0.03"; "" before anything cost anything.
func costWords(costs map[string]float64) string {
	if len(costs) == 0 {
		return ""
	}
	var sum float64
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(costs)) {
		sum += costs[p]
		parts = append(parts, firstNonEmpty(tt.Clean(p), "?")+" "+status.Dollars(costs[p], false))
	}
	if len(parts) == 1 {
		return "today " + parts[0]
	}
	return "today " + status.Dollars(sum, false) + ": " + strings.Join(parts, ", ")
}

// pausedWords says which agent profiles are paused and until when:
// "paused: claude until 20:00, codex"; "" for none.
func pausedWords(pauses map[string]pausefile.Pause, now time.Time) string {
	if len(pauses) == 0 {
		return ""
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(pauses)) {
		p := tt.Clean(name)
		if until := pauses[name].Until; !until.IsZero() {
			p += " until " + status.When(now, until)
		}
		parts = append(parts, p)
	}
	return "paused: " + strings.Join(parts, ", ")
}
