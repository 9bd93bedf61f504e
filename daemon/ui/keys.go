package ui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/taskd/taskd/daemon/task"
	tt "github.com/taskd/taskd/internal/termtext"
)

// This file holds what the keys do, the line that names them, and the
// help that lists them all.

// A binding is a key and what it does, for the help and the line of keys.
type binding struct {
	keys string // as the help shows them
	what string
}

// bindings are every key, as the help lists them.
var bindings = []binding{
	{"↑ ↓  k j", "move"},
	{"pgup pgdn", "a screen up, down"},
	{"home end  g G", "the first, the last row"},
	{"← →  h l", "fold, open (← on a task: to its parent)"},
	{"n", "the next task that needs a person"},
	{"enter", "answer the task, with a note"},
	{"a", "allow the calls it was refused, with a note"},
	{"c", "cancel it and the tasks below it (asks first)"},
	{"r", "retry: run it again from where it was (asks first)"},
	{"R", "restart: run it again from its first step (asks first)"},
	{"x  delete", "remove it: its file, run folders, inbox (asks first)"},
	{"p", "resume the paused profile that holds it back (asks first)"},
	{"d", "the diff of its git worktree, in $PAGER"},
	{"o", "all of its latest attempt's output, in $PAGER"},
	{"ctrl-r", "read every file again"},
	{"?", "this help"},
	{"q  ctrl-c", "quit"},
}

// key handles a key press in the current mode.
func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyCtrlC {
		return tea.Quit
	}
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste && m.mode != answering {
		// Keys typed faster than the terminal is read come together:
		// each is a key of its own.
		var cmds []tea.Cmd
		for _, r := range k.Runes {
			cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}))
		}
		return tea.Sequence(cmds...)
	}
	switch m.mode {
	case helping:
		m.mode = browsing
		return nil
	case confirming:
		c := m.confirm
		m.mode, m.confirm = browsing, nil
		if k.String() == "y" || k.String() == "Y" {
			return m.run(c.verb, c.act)
		}
		m.msg, m.msgErr = "not done: "+c.verb, false
		return nil
	case answering:
		return m.answerKey(k)
	}
	if m.snap == nil {
		if k.String() == "q" {
			return tea.Quit
		}
		return nil
	}
	m.msg = ""
	before := m.sel
	page := max(m.treeHeight()-1, 1)
	switch k.String() {
	case "q":
		return tea.Quit
	case "?":
		m.mode = helping
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "pgup", "ctrl+b":
		m.move(-page)
	case "pgdown", "ctrl+f", " ":
		m.move(page)
	case "home", "g":
		m.moveTo(0)
	case "end", "G":
		m.moveTo(len(m.rows) - 1)
		m.settle(-1)
		m.selectCursor()
	case "left", "h":
		m.fold(false)
	case "right", "l":
		m.fold(true)
	case "n":
		if !m.nextPerson() {
			m.msg = "no task needs a person"
		}
	case "enter":
		return m.startAnswer(false)
	case "a":
		return m.startAnswer(true)
	case "c":
		return m.ask(verbCancel)
	case "r":
		return m.ask(verbRetry)
	case "R":
		return m.ask(verbRestart)
	case "x", "delete":
		return m.ask(verbRemove)
	case "p":
		return m.resume()
	case "d":
		return m.diff()
	case "o":
		return m.output()
	case "ctrl+r":
		return m.reread()
	}
	if m.sel != before {
		return m.followSelected(false)
	}
	return nil
}

// footer is the last line: a question, what the last action did, or the
// keys that act on the selection.
func (m *Model) footer() string {
	switch {
	case m.mode == confirming && m.confirm != nil:
		return m.paintIf("33;1", tt.Fit(m.confirm.question+" [y/N]", m.width))
	case m.mode == answering:
		return m.paintIf("2", tt.Fit("↑↓ choose the answer · type a note · enter answers · esc leaves it unanswered", m.width))
	case m.mode == helping:
		return m.paintIf("2", tt.Fit("any key closes the help", m.width))
	case m.pending:
		return tt.Fit("…", m.width)
	case m.msg != "":
		code := "32"
		if m.msgErr {
			code = "31"
		}
		return m.paintIf(code, tt.Fit(tt.Home(tt.Clean(m.msg), m.opt.Home), m.width))
	}
	return m.paintIf("2", tt.Fit(strings.Join(m.hints(), " · "), m.width))
}

// hints are the keys that act on the selected row.
func (m *Model) hints() []string {
	out := []string{"↑↓ move"}
	t := m.selectedTask()
	if t == nil {
		return append(out, "←→ fold", "n next needing you", "? help", "q quit")
	}
	state := task.State(t.State)
	if len(t.Options) > 0 || state == task.NeedsHuman {
		out = append(out, "enter answer")
	}
	if hasOption(t, "allow") {
		out = append(out, "a allow")
	}
	if !state.Ended() {
		out = append(out, "c cancel")
	} else {
		out = append(out, "r retry", "R restart", "x remove")
	}
	if t.Pause != nil || t.PausedProfile != "" {
		out = append(out, "p resume")
	}
	if t.Worktree != nil {
		out = append(out, "d diff")
	}
	if t.Attempt > 0 || t.Steps > 0 {
		out = append(out, "o output")
	}
	return append(out, "? help", "q quit")
}

// help draws the list of keys, w columns wide and h lines high.
func (m *Model) help(w, h int) []string {
	lines := []string{m.paintIf("1", "Keys"), ""}
	keyWidth := 0
	for _, b := range bindings {
		keyWidth = max(keyWidth, tt.Width(b.keys))
	}
	for _, b := range bindings {
		for i, l := range tt.Wrap(b.what, max(w-keyWidth-4, 10), 2) {
			k := b.keys
			if i > 0 {
				k = ""
			}
			lines = append(lines, "  "+tt.Pad(k, keyWidth)+"  "+l)
		}
	}
	lines = append(lines, "")
	for _, l := range tt.Wrap("A row marked ! needs a person, or has a task below it that does. The view follows the files as they change.", w, 2) {
		lines = append(lines, l)
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return lines
}
