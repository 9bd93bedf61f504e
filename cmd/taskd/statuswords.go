package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
)

// This file holds the words taskd status shows for a task: its state, its
// subject, its age.

// subject is the task's subject without the "#<id> " that flow's
// write-through puts in front (the ID column shows it); a fork branch's
// "#<parent>/<branch> " becomes "<branch>: ".
func subject(t *status.Task) string {
	s := t.Subject
	if rest, ok := strings.CutPrefix(s, "#"+t.ID+" "); ok {
		return rest
	}
	if t.Parent != "" {
		if rest, ok := strings.CutPrefix(s, "#"+t.Parent+"/"); ok {
			if branch, desc, ok := strings.Cut(rest, " "); ok {
				return branch + ": " + desc
			}
			return rest
		}
	}
	return s
}

// displayState is the word status shows for a task's state.
func displayState(t *status.Task) string { return status.StateWord(t) }

// age renders a duration briefly: 5s, 3m, 2h, 4d.
func age(now, since time.Time) string {
	if since.IsZero() {
		return ""
	}
	d := now.Sub(since)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// stepCell is what the STEP column shows of a workflow: its current step
// and how many steps have run, "review 2/…" while it goes on, "end 3/3"
// once it has ended (no total is known before).
func stepCell(t *status.Task) string {
	if t.Steps == 0 {
		return t.Step
	}
	count := fmt.Sprintf(" %d/…", t.Steps)
	if task.State(t.State).Ended() {
		count = fmt.Sprintf(" %d/%d", t.Steps, t.Steps)
	}
	return fitWidth(clean(t.Step), max(colStep-width(count), 3)) + count
}

// waitsWords says what a waiting task waits for: "2 of 3 children: b (4),
// c (5)", or the task it handed work to. names gives a task's name by id.
func waitsWords(w *status.Waits, names map[string]string) string {
	var ids []string
	for _, id := range w.Open {
		if n := names[id]; n != "" && n != id {
			ids = append(ids, n+" ("+id+")")
		} else {
			ids = append(ids, id)
		}
	}
	what := map[string][2]string{
		"children": {"child", "children"},
		"handoff":  {"task it handed work to", "tasks it handed work to"},
		"converge": {"child to converge", "children to converge"},
	}[w.Kind]
	if what[0] == "" {
		what = [2]string{"task", "tasks"}
	}
	if len(w.Open) == 0 {
		return fmt.Sprintf("its %d %s have ended; it resumes", w.Total, plural(w.Total, what[0], what[1]))
	}
	if len(w.Open) == w.Total {
		return fmt.Sprintf("%d %s: %s", w.Total, plural(w.Total, what[0], what[1]), strings.Join(ids, ", "))
	}
	return fmt.Sprintf("%d of %d %s: %s", len(w.Open), w.Total, what[1], strings.Join(ids, ", "))
}

// pauseWords says which paused profile holds a task back, why and until
// when: "profile claude is paused until 20:00: You've hit your limit".
func pauseWords(now time.Time, p *status.Pause) string {
	s := "profile " + p.Profile + " is paused"
	if !p.Until.IsZero() {
		s += " until " + when(now, p.Until)
	}
	if p.Reason != "" {
		s += " (" + p.By + "): " + p.Reason
	}
	return s
}
