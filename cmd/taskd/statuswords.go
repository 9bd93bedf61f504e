package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/status"
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
func displayState(t *status.Task) string {
	switch {
	case t.Rejected != "":
		return "rejected"
	case t.Held != "":
		return "held"
	case t.State != "":
		return t.State
	case !t.Taskd:
		return t.Status
	case t.Status == "completed":
		return "completed"
	case len(t.BlockedBy) > 0:
		return "blocked"
	}
	return "pending"
}

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
