package ui

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	tt "github.com/taskd/taskd/internal/termtext"
	"github.com/taskd/taskd/taskfile"
)

// This file holds the answer form: the answers a task that waits for a
// person takes (metadata.taskd.hitl's options, as taskd status shows
// them), one chosen with the arrows, and a note typed in place that the
// daemon puts into the prompt of the step that runs next (taskd resolve
// --note).

// maxNoteRunes bounds a note.
const maxNoteRunes = 4000

// An answerForm is an answer being given to one task.
type answerForm struct {
	ref     string
	dir     *taskfile.Dir
	id      string
	reason  string
	options []string // none: the answer is typed
	grants  map[string][]string
	choice  int
	note    editor
}

// startAnswer opens the form for the selected task; allow chooses the
// answer allow.
func (m *Model) startAnswer(allow bool) tea.Cmd {
	t, dir, ok := m.target()
	if !ok {
		return nil
	}
	ref := t.List + "/" + t.ID
	waits := task.State(t.State) == task.NeedsHuman || len(t.Options) > 0
	switch {
	case !waits:
		m.msg, m.msgErr = ref+" does not wait for an answer (it is "+status.StateWord(t)+")", true
		return nil
	case allow && !hasOption(t, "allow"):
		m.msg, m.msgErr = ref+" has no refused call to allow; its answers: "+strings.Join(t.Options, ", "), true
		return nil
	}
	f := &answerForm{ref: ref, dir: dir, id: t.ID, reason: t.WaitingFor, options: t.Options, grants: t.Grants}
	for i, o := range f.options {
		if allow && o == "allow" {
			f.choice = i
		}
	}
	m.mode, m.form = answering, f
	return nil
}

// answerKey handles a key in the answer form.
func (m *Model) answerKey(k tea.KeyMsg) tea.Cmd {
	f := m.form
	switch k.Type {
	case tea.KeyEsc:
		m.mode, m.form = browsing, nil
		m.msg, m.msgErr = "not answered", false
		return nil
	case tea.KeyUp:
		f.choice = max(f.choice-1, 0)
		return nil
	case tea.KeyDown, tea.KeyTab:
		if len(f.options) > 0 {
			f.choice = (f.choice + 1) % len(f.options)
			if k.Type == tea.KeyDown {
				f.choice = min(f.choice, len(f.options)-1)
			}
		}
		return nil
	case tea.KeyEnter:
		answer, note := f.answer()
		if answer == "" {
			m.msg, m.msgErr = "type the answer first", true
			return nil
		}
		m.mode, m.form = browsing, nil
		return m.run(verbAnswer, func(ctx context.Context) doneMsg {
			if _, err := control.ResolveNote(ctx, f.dir, f.id, answer, note); err != nil {
				return doneMsg{err: fmt.Errorf("%s: %w", f.ref, err)}
			}
			text := f.ref + " answered " + answer
			if note != "" {
				text += ", with a note for the step that runs next"
			}
			return doneMsg{text: text}
		})
	}
	f.note.key(k)
	return nil
}

// answer is the answer chosen (or typed) and the note.
func (f *answerForm) answer() (answer, note string) {
	text := strings.TrimSpace(f.note.String())
	if len(f.options) == 0 {
		return text, ""
	}
	return f.options[f.choice], text
}

// draw draws the form into p, h lines at most: the answers on one line
// (the chosen one in brackets), what the chosen one grants, the note,
// then what the task waits for in the lines left.
func (f *answerForm) draw(p *pane, h int) {
	m := p.m
	p.rule("answer " + f.ref)
	label := "note: "
	if len(f.options) == 0 {
		label = "answer: "
	} else {
		var b strings.Builder
		b.WriteString("answer:")
		for i, o := range f.options {
			if i == f.choice {
				b.WriteString(" " + m.paintIf("7", "["+o+"]"))
			} else {
				b.WriteString("  " + o + " ")
			}
		}
		p.add(strings.TrimRight(b.String(), " "))
		if g := f.grants[f.options[f.choice]]; len(g) > 0 {
			p.note("grants: ", strings.Join(g, ", "), "", 2)
		}
	}
	p.add(label + f.note.view(p.w-tt.Width(label)))
	if f.reason != "" && h > len(p.lines) {
		p.note("waiting for: ", f.reason, "33", h-len(p.lines))
	}
}

// An editor is one line of text being typed.
type editor struct {
	text []rune
	pos  int // the cursor, in runes
}

func (e *editor) String() string { return string(e.text) }

// key edits the line as k asks: text (typed or pasted) goes in at the
// cursor, control characters as spaces; backspace, delete, ← →, home and
// end (ctrl-a, ctrl-e), ctrl-u (all before the cursor) and ctrl-w (the
// word before it) as in a shell.
func (e *editor) key(k tea.KeyMsg) {
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		rs := k.Runes
		if k.Type == tea.KeySpace {
			rs = []rune{' '}
		}
		for _, r := range rs {
			if len(e.text) >= maxNoteRunes {
				break
			}
			if unicode.IsControl(r) {
				r = ' '
			}
			e.text = append(e.text[:e.pos], append([]rune{r}, e.text[e.pos:]...)...)
			e.pos++
		}
	case tea.KeyBackspace:
		if e.pos > 0 {
			e.text = append(e.text[:e.pos-1], e.text[e.pos:]...)
			e.pos--
		}
	case tea.KeyDelete:
		if e.pos < len(e.text) {
			e.text = append(e.text[:e.pos], e.text[e.pos+1:]...)
		}
	case tea.KeyLeft:
		e.pos = max(e.pos-1, 0)
	case tea.KeyRight:
		e.pos = min(e.pos+1, len(e.text))
	case tea.KeyHome, tea.KeyCtrlA:
		e.pos = 0
	case tea.KeyEnd, tea.KeyCtrlE:
		e.pos = len(e.text)
	case tea.KeyCtrlU:
		e.text, e.pos = e.text[e.pos:], 0
	case tea.KeyCtrlW:
		i := e.pos
		for i > 0 && e.text[i-1] == ' ' {
			i--
		}
		for i > 0 && e.text[i-1] != ' ' {
			i--
		}
		e.text, e.pos = append(e.text[:i], e.text[e.pos:]...), i
	}
}

// view draws the line in w columns, the cursor a block, the text around
// the cursor shown when it is longer than the line.
func (e *editor) view(w int) string {
	before, after := string(e.text[:e.pos]), string(e.text[e.pos:])
	before = tt.FitLeft(before, max(w/2, w-1-tt.Width(after)))
	return tt.Fit(before+"█"+after, w)
}
