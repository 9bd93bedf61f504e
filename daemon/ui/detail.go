package ui

import (
	"fmt"
	"strings"

	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	tt "github.com/taskd/taskd/internal/termtext"
)

// This file draws the detail of the selected row: of a task, its subject,
// what it waits for or why it failed with the answers it takes, where its
// agent works and how far it is, its branch and what its work changed,
// its children, and its transcript's last lines; of a list, its counts
// and what is wrong with it.

// maxNote is how many lines a note of the detail takes at most.
const maxNote = 4

// A pane is the lines of the detail being drawn, w columns wide.
type pane struct {
	m     *Model
	w     int
	lines []string
}

func (p *pane) add(s string) { p.lines = append(p.lines, s) }

// note adds label and text wrapped under it (the home directory as ~),
// at most max lines; the label is painted with code.
func (p *pane) note(label, text, code string, max int) {
	text = tt.Home(tt.Clean(text), p.m.opt.Home)
	for i, l := range tt.Wrap(text, p.w-tt.Width(label), max) {
		lab := p.m.paintIf(code, label)
		if i > 0 {
			lab = strings.Repeat(" ", tt.Width(label))
		}
		p.add(strings.TrimRight(lab+l, " "))
	}
}

// rule is a line across the pane with a title in it.
func (p *pane) rule(title string) {
	title = tt.Fit(title, p.w-4)
	p.add(p.m.paintIf("2", "── ") + p.m.paintIf("1", title) + p.m.paintIf("2", " "+strings.Repeat("─", max(p.w-tt.Width(title)-4, 0))))
}

// detailPane draws the detail of the selected row in a.
func (m *Model) detailPane(a region) []string {
	if a.h <= 0 || a.w <= 0 {
		return nil
	}
	p := &pane{m: m, w: a.w}
	r := m.selected()
	switch {
	case m.mode == answering && m.form != nil:
		m.form.draw(p, a.h)
	case r == nil:
		p.rule("nothing selected")
	case r.task == nil:
		m.listDetail(p, r.list)
	default:
		m.taskDetail(p, r.list, r.task, a.h)
	}
	if len(p.lines) > a.h {
		p.lines = p.lines[:a.h]
	}
	return p.lines
}

// listDetail draws what the view knows of list l.
func (m *Model) listDetail(p *pane, l *status.List) {
	n := len(l.Tasks)
	p.rule(fmt.Sprintf("list %s · %d %s", l.ID, n, status.Plural(n, "task", "tasks")))
	if r := m.selected(); r != nil && r.counts != "" {
		p.note("", r.counts, "", maxNote)
	}
	if l.Paused != nil {
		p.note("paused: ", status.PauseWords(m.now, l.Paused), "33", 2)
		p.note("", pauseKeyWords(l.Paused), "", 1)
	}
	if why := m.snap.failed[l.ID]; why != "" {
		p.note("cannot be read: ", why, "31", maxNote)
	}
	if l.Refused != "" {
		p.note("refused: ", l.Refused, "31;1", maxNote)
		p.note("fix: ", l.Fix, "", maxNote)
	}
	for _, mn := range l.Misnamed {
		p.note("not read: ", mn.Name+": "+mn.Problem, "31;1", 2)
		p.note("fix: ", mn.Fix, "", 2)
	}
	if l.Hidden > 0 {
		p.note("", fmt.Sprintf("%d %s not addressed to taskd left out: 'taskd ui --all' shows %s", l.Hidden,
			status.Plural(l.Hidden, "task", "tasks"), status.Plural(l.Hidden, "it", "them")), "", 2)
	}
}

// taskDetail draws task t of list l, h lines at most.
func (m *Model) taskDetail(p *pane, l *status.List, t *status.Task, h int) {
	state := status.StateWord(t)
	title := l.ID + "/" + t.ID + " · " + state
	if t.Attempt > 0 {
		title += fmt.Sprintf(" · attempt %d", t.Attempt)
	}
	if age := status.Age(m.now, t.Since); age != "" {
		title += " · " + age
	}
	p.rule(title)
	p.note("", status.Subject(t), "1", 2)
	m.taskNotes(p, l, t, state)
	if d := m.detail.d; d != nil && m.detail.k == m.sel {
		if d.Summary != "" && ended(state) {
			p.note("summary: ", d.Summary, "", 2)
		}
		if u := usageWords(d); u != "" {
			p.note("spent: ", u, "", 1)
		}
	}
	m.transcriptLines(p, t, h)
}

// taskNotes adds what task t waits for, why it failed, where its agent
// works and its work, each with the keys that act on it.
func (m *Model) taskNotes(p *pane, l *status.List, t *status.Task, state string) {
	switch state {
	case "rejected":
		p.note("rejected: ", t.Rejected, "31", maxNote)
		p.note("fix: ", t.Fix, "", 2)
	case string(task.NeedsHuman):
		p.note("waiting for: ", firstNonEmpty(t.WaitingFor, "a person's answer"), "33", maxNote)
		p.note("answers: ", answersWords(t), "", 2)
		if g := t.Grants["allow"]; len(g) > 0 {
			p.note("allow: ", "exactly "+strings.Join(g, ", "), "", 2)
		}
		if g := t.Grants["allow-tool"]; len(g) > 0 {
			p.note("allow-tool: ", "all of "+strings.Join(g, ", "), "", 1)
		}
	case string(task.Succeeded):
		if len(t.Options) > 0 {
			p.note("stopped at: ", t.WaitingFor, "33", 2)
			p.note("answers: ", answersWords(t), "", 1)
		}
	case string(task.Starting):
		p.note("waiting for: ", t.WaitingFor, "34", 2)
		if t.Dispatch != "" {
			p.note("", t.Dispatch, "33", 2)
		}
	case "blocked":
		p.note("blocked by: ", strings.Join(t.BlockedBy, ", ")+" (must complete first)", "", 2)
	case string(task.Retrying):
		p.note("retrying after: ", t.Error, "33", maxNote)
	case "held":
		p.note("held: ", t.Held, "33", maxNote)
		if !t.HeldRetry.IsZero() {
			p.note("", "tries again in "+status.Age(t.HeldRetry, m.now)+"; no agent starts meanwhile", "", 1)
		}
	case string(task.Paused):
		p.note("paused: ", "usage limit, resumes "+status.When(m.now, t.ResumesAt), "33", 1)
		if t.PausedBy != "" {
			p.note("limit: ", t.PausedBy, "", 2)
		}
		if t.PausedProfile != "" {
			p.note("", "p resumes profile "+t.PausedProfile+" now", "", 1)
		}
	case string(task.Waiting):
		if t.Waits != nil {
			p.note("waiting for: ", status.WaitsWords(t.Waits, names(l)), "36", 2)
		}
	case string(task.Running):
		if t.Dispatch != "" {
			p.note("", t.Dispatch, "33", 2)
		}
		if t.Progress != nil {
			p.note("", progressWords(t, m.now), "", 2)
		}
	}
	if t.Pause != nil && state != string(task.Paused) {
		p.note("waiting for: ", status.PauseWords(m.now, t.Pause), "33", 2)
		p.note("", pauseKeyWords(t.Pause), "", 1)
	}
	if ended(state) && t.Error != "" && t.Error != "cancelled" {
		p.note("error: ", t.Error, "31", maxNote)
	}
	if w := t.Worktree; w != nil {
		p.note("branch: ", workWords(w, state), "", 2)
		p.note("worktree: ", m.path(w.Path), "", 1)
	} else if t.Cwd != "" {
		p.note("in: ", m.path(t.Cwd), "", 1)
	}
	if len(t.Children) > 0 {
		p.note("children: ", childrenWords(l, t), "", 2)
	}
}

// ended reports whether a task in state has ended.
func ended(state string) bool { return task.State(state).Ended() }

// answersWords lists the answers task t takes, and the keys that give
// them.
func answersWords(t *status.Task) string {
	if len(t.Options) == 0 {
		return "any (enter to answer)"
	}
	s := strings.Join(t.Options, ", ") + " (enter to answer"
	if hasOption(t, "allow") {
		s += ", a to allow"
	}
	return s + ")"
}

func hasOption(t *status.Task, o string) bool {
	for _, x := range t.Options {
		if x == o {
			return true
		}
	}
	return false
}

// workWords says where a task's worktree is and what its work changed:
// "taskd/l/7 of ~/src/app · 1a2b3c4 · 3 files changed +12 −4 (d: diff)".
func workWords(w *status.Worktree, state string) string {
	s := w.Branch + " of " + w.Repo
	switch {
	case w.Commit != "":
		s += fmt.Sprintf(" · %s · %d %s changed +%d −%d", w.Commit[:min(len(w.Commit), 7)],
			w.FilesChanged, status.Plural(w.FilesChanged, "file", "files"), w.Insertions, w.Deletions)
	case state == string(task.Succeeded):
		s += " · no changes"
	}
	return s + " (d: diff)"
}

// childrenWords lists task t's children with their states: "5 running,
// review (6) needs_human".
func childrenWords(l *status.List, t *status.Task) string {
	byID := make(map[string]*status.Task, len(t.Children))
	for _, c := range t.Children {
		byID[c] = nil
	}
	for i := range l.Tasks {
		if _, ok := byID[l.Tasks[i].ID]; ok {
			byID[l.Tasks[i].ID] = &l.Tasks[i]
		}
	}
	parts := make([]string, 0, len(t.Children))
	for _, c := range t.Children {
		ct := byID[c]
		if ct == nil {
			continue
		}
		name := c
		if ct.Name != "" && ct.Name != c {
			name = ct.Name + " (" + c + ")"
		}
		parts = append(parts, name+" "+status.StateWord(ct))
	}
	return strings.Join(parts, ", ")
}

// names returns the names of l's tasks by id.
func names(l *status.List) map[string]string {
	out := make(map[string]string, len(l.Tasks))
	for i := range l.Tasks {
		if n := l.Tasks[i].Name; n != "" {
			out[l.Tasks[i].ID] = n
		}
	}
	return out
}

// transcriptLines fills the rest of the pane, h lines in all, with the
// last lines of task t's transcript.
func (m *Model) transcriptLines(p *pane, t *status.Task, h int) {
	room := h - len(p.lines) - 1
	if room <= 0 {
		return
	}
	s := m.script
	switch {
	case s.k != m.sel || s.attempt == 0 && len(s.lines) == 0:
		if t.Attempt > 0 || t.Steps > 0 {
			p.rule("output")
		}
		return
	case len(s.lines) == 0:
		p.rule(fmt.Sprintf("attempt %d · no output yet", s.attempt))
		return
	}
	what := map[string]string{"transcript.log": "transcript", "stdout.log": "output", "stderr.log": "standard error"}[s.file]
	p.rule(fmt.Sprintf("attempt %d · %s · o: all of it", s.attempt, firstNonEmpty(what, "output")))
	lines := s.lines
	if len(lines) > room {
		lines = lines[len(lines)-room:]
	}
	for _, l := range lines {
		p.add(tt.Fit(tt.Home(l, m.opt.Home), p.w))
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// usageWords says what task d's attempts spent: "claude · 4 turns · 12.3k
// tokens · $0.12; 3 attempts $0.40".
func usageWords(d *status.Detail) string {
	var parts []string
	if d.Agent != "" {
		parts = append(parts, tt.Clean(d.Agent))
	}
	if u := d.Last; u != nil {
		if u.Turns > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", u.Turns, status.Plural(u.Turns, "turn", "turns")))
		}
		if u.Tokens > 0 {
			parts = append(parts, status.Tokens(u.Tokens)+" tokens")
		}
		if u.CostUSD != nil {
			parts = append(parts, status.Dollars(*u.CostUSD, u.Estimated))
		}
	}
	s := strings.Join(parts, " · ")
	if u := d.Total; u != nil && u.CostUSD != nil {
		s += fmt.Sprintf("; %d attempts %s", u.Runs, status.Dollars(*u.CostUSD, u.Estimated))
	}
	return s
}

// pauseKeyWords says which key lifts pause p: P the pause of a list, p
// that of a profile; the pause of everything only taskd resume --all.
func pauseKeyWords(p *status.Pause) string {
	switch {
	case p.What == "everything":
		return "'" + p.Resume + "' resumes everything"
	case p.Profile != "":
		return "p resumes profile " + p.Profile + " now"
	}
	return "P resumes " + p.What
}

// pausedListWords says briefly why a list row is paused: "paused (taskd
// pause)", "everything paused".
func pausedListWords(p *status.Pause) string {
	what := "paused"
	if p.What == "everything" {
		what = "everything paused"
	}
	if p.By != "" {
		what += " (" + p.By + ")"
	}
	return what
}
