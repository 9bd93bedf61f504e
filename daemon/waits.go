package daemon

import (
	"os"
	"time"

	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// The loop's part of the subagent commands (package subagent): the waits
// of tasks suspended by a /handoff or /converge line, and the links that
// mirror a handed-off child's events into its parent's stream.

// observeSubagents is observe's part for the subagent commands: it keeps
// the suspended wait of a task (and a wake-up at its deadline), re-evaluates
// the parent of a child (a suspended parent also waits for the delivery of
// its children's results), and keeps the mirror's links current. Loop
// goroutine only.
func (d *Daemon) observeSubagents(l *list, id string, e *entry, t *taskfile.Task) {
	e.wait = nil
	if e.state == task.Waiting {
		if w := subagent.WaitOf(t); w != nil {
			e.wait = w
			if ends := w.Ends(); !ends.IsZero() {
				l.recheckAt(id, ends)
			}
		}
	}
	if e.parent != "" {
		l.consider(e.parent)
	}
	links := subagent.Links(id, t)
	if links == nil && (l.mirror == nil || !l.mirror.Watching(id)) {
		return
	}
	if l.mirror == nil {
		l.mirror = subagent.NewMirror(l.Events)
	}
	l.mirror.SetLinks(id, links)
}

// waitDone reports whether the wait of a suspended task is over: every
// child has ended and its result is delivered, or (first_success) one has
// succeeded, or the handoff's deadline has passed. Loop goroutine only.
func (l *list) waitDone(e *entry) bool {
	w := e.wait
	if ends := w.Ends(); !ends.IsZero() && !time.Now().Before(ends) {
		return true
	}
	ended := 0
	for _, c := range w.Children {
		ce := l.entries[c]
		if ce == nil {
			if _, err := os.Lstat(l.Dir.File(c)); err != nil {
				ended++ // gone
			}
			continue
		}
		if !terminal(ce) || !(ce.delivered || ce.reject != "" || ce.archived) {
			continue
		}
		ended++
		if w.Any && ce.state == task.Succeeded {
			return true
		}
	}
	return ended == len(w.Children)
}
