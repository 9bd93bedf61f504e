package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/proc"
	"github.com/taskd/taskd/taskfile"
	"golang.org/x/sys/unix"
)

// This file holds what a person does from the view. Each action calls
// what the command of the same name calls (package control, status.
// Diff), on the selected task; each that loses something (a running
// agent, where a task had got to, its files) asks first.

// The verbs of the actions, as the view names them.
const (
	verbAnswer  = "answer"
	verbCancel  = "cancel"
	verbRetry   = "retry"
	verbRestart = "restart"
	verbRemove  = "remove"
	verbResume  = "resume"
	verbPause   = "pause"
)

// actionTimeout bounds an action: a task file's lock that nobody
// releases (package taskfile waits for it) does not hang the view.
const actionTimeout = 15 * time.Second

// A confirmation is an action that waits for a person's yes.
type confirmation struct {
	verb     string
	question string
	act      func(context.Context) doneMsg
}

// run runs act off the view's loop; its doneMsg comes back.
func (m *Model) run(verb string, act func(context.Context) doneMsg) tea.Cmd {
	m.pending = true
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		return act(ctx)
	}
}

// target returns the selected task and its list's directory, or says why
// there is none.
func (m *Model) target() (*status.Task, *taskfile.Dir, bool) {
	t := m.selectedTask()
	if t == nil {
		m.msg, m.msgErr = "select a task first", true
		return nil, nil, false
	}
	dir, err := control.OpenList(m.opt.Root, t.List, false)
	if err != nil {
		m.msg, m.msgErr = err.Error(), true
		return nil, nil, false
	}
	return t, dir, true
}

// ask asks before verb acts on the selected task.
func (m *Model) ask(verb string) tea.Cmd {
	t, dir, ok := m.target()
	if !ok {
		return nil
	}
	ref := t.List + "/" + t.ID
	c := &confirmation{verb: verb}
	switch verb {
	case verbCancel:
		if task.State(t.State).Ended() {
			m.msg, m.msgErr = ref+" has already ended ("+t.State+")", true
			return nil
		}
		c.question = "Cancel " + ref + belowWords(m, t) + "? A running agent is stopped."
		c.act = edit(ref, "cancel requested", func(ctx context.Context) (*taskfile.Task, error) { return control.CancelTask(ctx, dir, t.ID) })
	case verbRetry:
		c.question = "Run " + ref + " again from where it was? Its error and failures are cleared."
		c.act = edit(ref, "will run", func(ctx context.Context) (*taskfile.Task, error) { return control.StartTask(ctx, dir, t.ID) })
	case verbRestart:
		c.question = "Run " + ref + " again from its first step? Where it had got to is cleared."
		c.act = edit(ref, "will run from its first step", func(ctx context.Context) (*taskfile.Task, error) { return control.RestartTask(ctx, dir, t.ID) })
	case verbRemove:
		c.question = "Remove " + ref + ": its file, run folders and inbox? This cannot be undone."
		c.act = remove(ref, dir, t.ID, false)
	}
	m.mode, m.confirm = confirming, c
	return nil
}

// resume asks before it lifts the pause of the agent profile that holds
// the selected task back (or paused it); with a list selected, of the one
// profile paused.
func (m *Model) resume() tea.Cmd {
	profile := ""
	if t := m.selectedTask(); t != nil {
		switch {
		case t.Pause != nil:
			profile = t.Pause.Profile
		case t.PausedProfile != "":
			profile = t.PausedProfile
		}
	}
	if profile == "" && len(m.snap.pauses) == 1 && m.selectedTask() == nil {
		for name := range m.snap.pauses {
			profile = name
		}
	}
	if t := m.selectedTask(); profile == "" && t != nil && t.Pause != nil {
		m.msg, m.msgErr = t.Pause.What+" is paused, not a profile: "+pauseKeyWords(t.Pause), true
		return nil
	}
	if profile == "" {
		m.msg, m.msgErr = "no paused profile holds the selected task back", true
		if len(m.snap.pauses) > 0 {
			m.msg = "select a task a paused profile holds back: " + pausedWords(m.snap.pauses, m.now)
		}
		return nil
	}
	root := m.opt.Root
	m.mode, m.confirm = confirming, &confirmation{verb: verbResume,
		question: "Lift the pause of profile " + profile + " now? The tasks it holds back start at once.",
		act: func(ctx context.Context) doneMsg {
			l, err := pausefile.End(ctx, root, pausefile.Scope{Kind: pausefile.Profile, Name: profile}, time.Now())
			if err != nil {
				return doneMsg{err: err}
			}
			text := "profile " + profile + ": not paused any more"
			if l.Held != nil || l.Limit != nil {
				text = "profile " + profile + ": pause lifted"
			}
			if len(l.Resumed) > 0 {
				text += "; resume now: " + strings.Join(l.Resumed, " ")
			}
			return doneMsg{text: text}
		}}
	return nil
}

// pauseList asks before it pauses the list of the selected row, or lifts
// the list's pause if it has one, as taskd pause LIST and taskd resume
// LIST do (pausefile.Begin, pausefile.End): no new agent starts in a
// paused list; the agents running in it go on.
func (m *Model) pauseList() tea.Cmd {
	r := m.selected()
	if r == nil || r.list == nil {
		m.msg, m.msgErr = "select a list or a task first", true
		return nil
	}
	root, list, now := m.opt.Root, r.list.ID, m.opt.Now()
	scope := pausefile.Scope{Kind: pausefile.List, Name: list}
	rec, err := pausefile.Read(root)
	if err != nil {
		m.msg, m.msgErr = err.Error(), true
		return nil
	}
	c := &confirmation{verb: verbPause}
	if p, ok := rec.Get(scope); ok {
		c.verb = verbResume
		c.question = "Resume list " + list + " (" + p.By + ")? Its tasks may start at once."
		c.act = func(ctx context.Context) doneMsg {
			if _, err := pausefile.End(ctx, root, scope, now); err != nil {
				return doneMsg{err: err}
			}
			return doneMsg{text: "list " + list + ": pause lifted"}
		}
	} else {
		c.question = "Pause list " + list + "? No new agent starts in it; the running ones go on."
		c.act = func(ctx context.Context) doneMsg {
			p := pausefile.Pause{By: pausefile.ByPerson, Reason: "taskd ui", Since: now}
			if err := pausefile.Begin(ctx, root, scope, p, now); err != nil {
				return doneMsg{err: err}
			}
			return doneMsg{text: "list " + list + ": paused until P again or 'taskd resume " + list + "'"}
		}
	}
	m.mode, m.confirm = confirming, c
	return nil
}

// belowWords says how many tasks below t a cancel takes with it: "" for
// none, " and the 3 tasks below it".
func belowWords(m *Model, t *status.Task) string {
	n := 0
	r := m.selected()
	if r == nil {
		return ""
	}
	seen := map[string]bool{t.ID: true}
	byID := make(map[string]*status.Task, len(r.list.Tasks))
	for i := range r.list.Tasks {
		byID[r.list.Tasks[i].ID] = &r.list.Tasks[i]
	}
	var count func(*status.Task)
	count = func(p *status.Task) {
		for _, c := range p.Children {
			if ct := byID[c]; ct != nil && !seen[c] {
				seen[c] = true
				n++
				count(ct)
			}
		}
	}
	count(t)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" and the %d %s below it", n, status.Plural(n, "task", "tasks"))
}

// edit is an action that changes a task file through fn and says done.
func edit(ref, done string, fn func(context.Context) (*taskfile.Task, error)) func(context.Context) doneMsg {
	return func(ctx context.Context) doneMsg {
		if _, err := fn(ctx); err != nil {
			return doneMsg{err: fmt.Errorf("%s: %w", ref, err)}
		}
		return doneMsg{text: ref + " " + done}
	}
}

// remove is the action that removes task id (with force, also one that
// runs); a running task is asked about again.
func remove(ref string, dir *taskfile.Dir, id string, force bool) func(context.Context) doneMsg {
	return func(ctx context.Context) doneMsg {
		n, err := control.Remove(ctx, dir, id, force)
		switch {
		case errors.Is(err, control.ErrActive):
			return doneMsg{text: ref + " is running: not removed", then: &confirmation{verb: verbRemove,
				question: ref + " is running. Remove it anyway? Its agent is stopped, and this cannot be undone.",
				act:      remove(ref, dir, id, true)}}
		case err != nil:
			return doneMsg{err: fmt.Errorf("%s: %w", ref, err)}
		}
		return doneMsg{text: fmt.Sprintf("%s removed (%s of run folders and inbox)", ref, bytesWords(n))}
	}
}

// bytesWords says a size briefly: 512 B, 3.1 kB, 2.0 MB.
func bytesWords(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// diff shows the selected task's work in its git worktree in the pager,
// as taskd diff writes it.
func (m *Model) diff() tea.Cmd {
	t := m.selectedTask()
	if t == nil || t.Worktree == nil {
		m.msg, m.msgErr = "the selected task has no git worktree: there is no diff", true
		return nil
	}
	root, list, id := m.opt.Root, t.List, t.ID
	return m.run("diff", func(ctx context.Context) doneMsg {
		text, err := status.Diff(ctx, root, list, id, false)
		if err != nil {
			return doneMsg{err: err}
		}
		return doneMsg{page: &pageMsg{text: []byte(text)}}
	})
}

// output shows all of the selected task's latest output in the pager:
// the log the detail shows the end of.
func (m *Model) output() tea.Cmd {
	t, s := m.selectedTask(), m.script
	if t == nil || s.k != m.sel || s.dir == "" || s.file == "" {
		m.msg, m.msgErr = "the selected task has no output yet", true
		return nil
	}
	base := filepath.Join(m.opt.Root, t.List)
	path := filepath.Join(s.dir, s.file)
	return func() tea.Msg { return pageMsg{path: path, base: base} }
}

// page runs the pager on what msg names.
func (m *Model) page(msg pageMsg) tea.Cmd {
	var in io.Reader = bytes.NewReader(msg.text)
	var closer io.Closer
	if msg.path != "" {
		f, err := openLog(msg.base, msg.path)
		if err != nil {
			m.msg, m.msgErr = err.Error(), true
			return nil
		}
		in, closer = f, f
	}
	cmd := exec.Command("sh", "-c", pagerOf(m.opt.Pager))
	cmd.Stdin = in
	return tea.Exec(procCommand{cmd}, func(err error) tea.Msg {
		if closer != nil {
			closer.Close()
		}
		if err != nil {
			return doneMsg{err: fmt.Errorf("the pager: %w", err)}
		}
		return doneMsg{}
	})
}

// openLog opens the log at path inside the list at base, following no
// link and never waiting on anything but a regular file.
func openLog(base, path string) (*os.File, error) {
	f, err := fsroot.OpenFile(base, path, os.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

// pagerOf is the command the pager runs as: pager, else less, else more.
func pagerOf(pager string) string {
	switch {
	case pager != "":
		return pager
	case lookPath("less"):
		return "less"
	}
	return "more"
}

func lookPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// procCommand runs a command for tea.Exec through package proc, as taskd
// starts every process.
type procCommand struct{ *exec.Cmd }

func (c procCommand) Run() error { return proc.Run(c.Cmd) }

func (c procCommand) SetStdin(r io.Reader) {
	if c.Stdin == nil {
		c.Stdin = r
	}
}

func (c procCommand) SetStdout(w io.Writer) {
	if c.Stdout == nil {
		c.Stdout = w
	}
}

func (c procCommand) SetStderr(w io.Writer) {
	if c.Stderr == nil {
		c.Stderr = w
	}
}

// reread asks the feed to read everything again.
func (m *Model) reread() tea.Cmd {
	if m.feed == nil {
		return nil
	}
	f := m.feed
	m.msg = "reading every file again"
	return func() tea.Msg {
		f.Reread()
		return nil
	}
}
