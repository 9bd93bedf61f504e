package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/termtext"
)

// statusView is everything taskd status draws. Rendering it is pure: the
// same view gives the same text, whatever the clock or the terminal.
type statusView struct {
	root   string // the task root, as found
	home   string // the user's home, shown as ~ in paths; empty: no abbreviation
	daemon daemonState
	lists  []status.List
	// refused says why the daemon refuses the root ("") and each list (by
	// id) it does not serve.
	refused map[string]refusal
	now     time.Time         // ages are relative to it
	names   map[string]string // task names by id, of the list being drawn
	width   int               // columns; every line fits
	color   bool              // ANSI colours
	compact bool              // taskd ls: no notes under the tasks
}

// A refusal is why the daemon does not serve a root or a list.
type refusal struct {
	kind  error  // fsroot.ErrWritable, fsroot.ErrNotOwned or fsroot.ErrLink
	mode  string // the mode others can write through (ErrWritable)
	uid   int    // the owner (ErrNotOwned)
	entry string // the link, relative to the list (ErrLink)
	what  string // what it is (ErrLink): "a symbolic link (to …)", …
}

// note returns what status says of refusal r of the directory at path
// (what: "root" or "list") and the command that fixes it.
func (r refusal) note(what, path string) (problem, fix string) {
	verdict := map[string]string{"root": "so no daemon runs on it", "list": "so the daemon ignores it"}[what]
	switch r.kind {
	case fsroot.ErrWritable:
		return fmt.Sprintf("other users can write to this %s (mode %s), %s", what, r.mode, verdict), "chmod go-w " + path
	case fsroot.ErrNotOwned:
		return fmt.Sprintf("this %s belongs to another user (uid %d), who could make taskd run commands as you, %s", what, r.uid, verdict),
			fmt.Sprintf("chown %d %s as root, or run taskd as its owner", os.Geteuid(), path)
	}
	return fmt.Sprintf("%s is %s, and taskd follows no link in its own files, %s", r.entry, r.what, verdict), "rm " + filepath.Join(path, r.entry)
}

// daemonState says whether a daemon serves the root.
type daemonState struct {
	running bool
	pid     int    // the holder of the lock, if the lock file records it
	err     string // why it could not be told; then running means nothing
}

// Column widths of the task table. The subject takes what is left.
const (
	colIndent    = 2
	colID        = 10
	colState     = 11 // "needs_human"
	colStep      = 16
	colAttempt   = 3
	colAge       = 5
	noteIndent   = colIndent + colID + 1 // notes start under STATE
	maxNoteLines = 3
)

// ANSI colours by state (status.StateColors).
var stateColor = status.StateColors

// render writes the view to w.
func (v *statusView) render(w io.Writer) {
	r := &renderer{v: v, w: w}
	r.header()
	if len(v.lists) == 0 {
		r.line("")
		r.text(fmt.Sprintf("No task lists in %s yet. Put a task file in %s/<list>/, or run 'taskd submit'.",
			v.path(v.root), v.path(v.root)))
		return
	}
	for _, l := range v.lists {
		r.line("")
		r.list(l)
	}
}

// renderer holds the state of one render.
type renderer struct {
	v *statusView
	w io.Writer
}

func (r *renderer) line(s string) { fmt.Fprintln(r.w, s) }

func (r *renderer) paint(code, s string) string {
	if !r.v.color || code == "" || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (r *renderer) fit(s string, n int) string { return fit(s, n) }

// text writes a message wrapped to the width.
func (r *renderer) text(s string) {
	for _, l := range wrap(clean(s), r.v.width, 10) {
		r.line(l)
	}
}

// header says which root this is and whether a daemon serves it.
func (r *renderer) header() {
	v := r.v
	var state, code string
	switch {
	case v.daemon.err != "":
		state, code = "daemon state unknown", "33"
	case v.daemon.running && v.daemon.pid > 0:
		state, code = fmt.Sprintf("daemon running (pid %d)", v.daemon.pid), "32"
	case v.daemon.running:
		state, code = "daemon running", "32"
	default:
		state, code = "no daemon running", "33;1"
	}
	root := fitLeft(clean(v.path(v.root)), max(v.width-width(state)-3, 20))
	r.line(r.paint("1", root) + " · " + r.paint(code, r.fit(state, v.width-width(root)-3)))
	if v.daemon.err != "" {
		r.text(v.abbrev(v.daemon.err))
	}
	if ref, ok := v.refused[""]; ok {
		problem, fix := ref.note("root", v.path(v.root))
		r.noteAt(0, "refused: ", problem, "31;1")
		r.noteAt(0, "fix: ", fix, "")
	} else if !v.daemon.running && v.daemon.err == "" {
		r.text("Tasks wait until one runs: start it with 'taskd run', or 'taskd start' for the user service.")
	}
}

// list writes one list: a summary line, the table of tasks as trees of
// parents and children, and what was left out.
func (r *renderer) list(l status.List) {
	v := r.v
	parts := status.StateCounts(l.Tasks)
	head := fmt.Sprintf("%s: %d %s", clean(l.ID), len(l.Tasks), plural(len(l.Tasks), "task", "tasks"))
	if len(parts) > 0 {
		head += " · " + strings.Join(parts, ", ")
	}
	if l.Paused != nil {
		head += " · paused"
	}
	for i, l := range wrap(head, v.width-colIndent, 3) {
		if i > 0 {
			l = strings.Repeat(" ", colIndent) + l
		}
		r.line(r.paint("1", l))
	}
	if l.Paused != nil {
		r.noteAt(colIndent, "paused: ", pauseWords(v.now, l.Paused)+" · resume: "+l.Paused.Resume, "33")
	}
	if ref, ok := v.refused[l.ID]; ok {
		problem, fix := ref.note("list", v.path(filepath.Join(v.root, l.ID)))
		r.noteAt(colIndent, "refused: ", problem, "31;1")
		r.noteAt(colIndent, "fix: ", fix, "")
	}
	for _, m := range l.Misnamed {
		r.noteAt(colIndent, "not read: ", m.Name+": "+m.Problem, "31;1")
		r.noteAt(colIndent, "fix: ", m.Fix, "")
	}
	if len(l.Tasks) > 0 {
		r.line(r.paint("2", strings.TrimRight(r.cells(rowCells{"ID", pad("STATE", colState), "STEP", "ATT", "AGE", "SUBJECT"}), " ")))
		v.names = map[string]string{}
		for _, t := range l.Tasks {
			v.names[t.ID] = t.Name
		}
		r.tree(l)
	}
	if l.Hidden > 0 {
		r.line(r.fit(fmt.Sprintf("%s+ %d %s not addressed to taskd: 'taskd status --all' shows %s",
			strings.Repeat(" ", colIndent), l.Hidden, plural(l.Hidden, "task", "tasks"), plural(l.Hidden, "it", "them")), v.width))
	}
}

// rowCells are the columns of one row of the table, as text; state is
// padded before painting.
type rowCells struct{ id, state, step, attempt, age, subject string }

// cells lays out one row of the table.
func (r *renderer) cells(c rowCells) string {
	id, state, step, attempt, age, subject := c.id, c.state, c.step, c.attempt, c.age, c.subject
	subjectWidth := max(r.v.width-(colIndent+colID+1+colState+1+colStep+1+colAttempt+1+colAge+2), 10)
	return strings.Repeat(" ", colIndent) + pad(r.fit(id, colID), colID) + " " + state + " " +
		pad(r.fit(step, colStep), colStep) + " " + padLeft(attempt, colAttempt) + " " +
		padLeft(age, colAge) + "  " + r.fit(subject, subjectWidth)
}

// tree writes the tasks of l, each child under its parent (status.Walk).
func (r *renderer) tree(l status.List) {
	status.Walk(&l, func(t *status.Task, lead string) bool {
		r.row(t, lead)
		return true
	})
}

// row writes one task and the notes that say what it waits for or what
// went wrong, with the command that acts on it.
func (r *renderer) row(t *status.Task, tree string) {
	v := r.v
	state := displayState(t)
	attempt := ""
	if t.Attempt > 0 {
		attempt = fmt.Sprint(t.Attempt)
	}
	word := r.fit(state, colState)
	painted := r.paint(stateColor[state], word) + strings.Repeat(" ", colState-width(word))
	r.line(strings.TrimRight(r.cells(rowCells{tree + t.ID, painted, stepCell(t), attempt, age(v.now, t.Since), prioritized(t, state)}), " "))
	ref := clean(t.List + "/" + t.ID)
	switch {
	case state == "rejected":
		r.note("rejected: ", t.Rejected, "31")
		if t.Fix != "" {
			r.note("fix: ", t.Fix, "")
		}
	case state == "needs_human":
		r.note("waiting for: ", firstNonEmpty(t.WaitingFor, "a person's answer"), "33")
		answer := "taskd resolve " + ref + " ANSWER"
		if len(t.Options) > 0 {
			answer = "taskd resolve " + ref + " " + t.Options[0]
			if len(t.Options) > 1 {
				answer += " (or " + strings.Join(t.Options[1:], ", ") + ")"
			}
		}
		r.note("answer: ", answer, "")
		if g := t.Grants["allow"]; len(g) > 0 {
			r.note("allow: ", "exactly "+strings.Join(g, ", "), "")
		}
		if g := t.Grants["allow-tool"]; len(g) > 0 {
			r.note("allow-tool: ", "all of "+strings.Join(g, ", "), "")
		}
	case state == "succeeded" && len(t.Options) > 0:
		r.note("stopped at: ", t.WaitingFor, "33")
		r.note("answer: ", "taskd resolve "+ref+" continue", "")
	case state == "blocked":
		r.note("blocked by: ", strings.Join(t.BlockedBy, ", ")+" (must complete first)", "")
	case state == "failed" || state == "timed_out" || state == "stopped" || state == "cancelled":
		if t.Error != "" && t.Error != "cancelled" {
			r.note("error: ", t.Error, "31")
		}
		again := "retry: taskd retry " + ref
		if t.Attempt > 0 {
			again += " · output: taskd logs " + ref
		}
		r.note("", again, "")
	case state == "retrying" && t.Error != "":
		r.note("retrying after: ", t.Error, "33")
	case state == "held":
		r.note("held: ", t.Held, "33")
		if !t.HeldRetry.IsZero() {
			r.note("", "tries again in "+age(t.HeldRetry, v.now)+"; no agent starts meanwhile", "")
		}
	case state == "paused":
		r.note("paused: ", "usage limit, resumes "+when(v.now, t.ResumesAt), "33")
		if t.PausedBy != "" {
			r.note("limit: ", t.PausedBy, "")
		}
		if t.PausedProfile != "" {
			r.note("", "resume now: taskd resume "+t.PausedProfile, "")
		}
	case (state == "pending" || state == "retrying" || state == "scheduled") && t.Pause != nil:
		r.note("waiting for: ", pauseWords(v.now, t.Pause), "33")
		r.note("", "resume now: "+firstNonEmpty(t.Pause.Resume, "taskd resume "+t.Pause.Profile), "")
	case state == "pending" && t.Interrupted != "":
		r.note("interrupted: ", t.Interrupted, "33")
	case (state == "pending" || state == "retrying") && t.Window != "":
		r.note("waiting for: ", t.Window, "36")
	case state == "scheduled":
		r.note("starts: ", "at "+when(v.now, t.StartsAt)+", not before", "36")
	case state == "recurring":
		next := "next run " + when(v.now, t.NextRun)
		if t.NextRun.IsZero() {
			next = "its next run is decided when a daemon runs"
		}
		r.note("schedule: ", t.Schedule+" · "+next, "36")
		if t.RunsMade > 0 {
			r.note("", fmt.Sprintf("%d %s made, the last %s; cancel it to stop it: taskd cancel %s", t.RunsMade, plural(t.RunsMade, "run", "runs"), t.LastRun, ref), "")
		}
	case state == "waiting" && t.Waits != nil:
		r.note("waiting for: ", waitsWords(t.Waits, v.names), "36")
	case state == "starting":
		r.note("waiting for: ", t.WaitingFor, "34")
		if t.Dispatch != "" {
			r.note("", t.Dispatch, "33") // its attempt, sent before the running mark, waits
		}
	case state == "running":
		if t.Dispatch != "" {
			r.note("", t.Dispatch, "33") // a worker's attempt waits (docs/distributed.md)
		}
		if line := runningLine(v, t); line != "" {
			r.note("", line, "")
		}
	case !t.Taskd:
		r.note("", `not taskd's: its owner is not "taskd" and it has no metadata.taskd`, "")
	}
	if t.CwdNote != "" && !task.State(t.State).Ended() {
		r.note("in: ", "your home directory, for the Claude Code session's directory is not known (taskd show "+ref+" says why)", "33")
	}
	if w := t.Worktree; w != nil && endedStates[state] {
		r.note("", workLine(w, state), "")
	}
	if len(t.OutputCut) > 0 && state != "running" {
		r.note("output cut: ", cutWords(t.OutputCut)+" (the middle; taskd logs "+ref+" shows where)", "33")
	}
	if len(t.Below) > 0 {
		r.note("below: ", belowWords(t.Below), "33")
	}
}

// cutWords says how much the cap cut of each log: "stdout.log 1.4 GiB,
// stderr.log 3 MiB".
func cutWords(cut map[string]int64) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(cut)) {
		parts = append(parts, name+" "+agent.SizeText(cut[name]))
	}
	return strings.Join(parts, ", ")
}

// belowWords says which tasks under one need attention: "5 needs a person,
// 7 failed".
func belowWords(below []status.Below) string {
	words := map[string]string{"needs_human": "needs a person", "failed": "failed", "timed_out": "timed out", "stopped": "was stopped", "held": "is held"}
	parts := make([]string, len(below))
	for i, b := range below {
		parts[i] = b.ID + " " + firstNonEmpty(words[b.State], b.State)
	}
	return strings.Join(parts, ", ")
}

// note writes label and text under the task, wrapped to at most
// maxNoteLines lines; the label is painted with code.
func (r *renderer) note(label, text, code string) {
	r.noteAt(noteIndent, label, text, code)
}

// noteAt is note at any indentation; a compact view has none.
func (r *renderer) noteAt(at int, label, text, code string) {
	if r.v.compact {
		return
	}
	avail := r.v.width - at - width(label)
	lines := wrap(r.v.abbrev(clean(text)), avail, maxNoteLines)
	indent := strings.Repeat(" ", at)
	for i, l := range lines {
		lab := r.paint(code, label)
		if i > 0 {
			lab = strings.Repeat(" ", width(label))
		}
		r.line(strings.TrimRight(indent+lab+l, " "))
	}
}

// path shows p with the home directory as ~.
func (v *statusView) path(p string) string {
	if v.home != "" && (p == v.home || strings.HasPrefix(p, v.home+"/")) {
		return "~" + p[len(v.home):]
	}
	return p
}

// abbrev replaces the home directory with ~ in the paths inside s that
// start with it: where a path begins (not inside another, such as
// /srv/x/root/… when the home is /root) and followed by / or the path's
// end.
func (v *statusView) abbrev(s string) string {
	return termtext.Home(s, v.home)
}
