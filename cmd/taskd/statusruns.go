package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/status"
)

// This file holds what taskd status says of a task's agent runs: where a
// running agent works and how far it is, and when a paused task resumes.

// runningLine says where a running task's agent works and what it has
// done so far: "in ~/src/app · turn 3 · Edit login_test.go · 12.3k
// tokens · $0.04"; in a worktree, "on branch taskd/l/7 of ~/src/app".
func runningLine(v *statusView, t *status.Task) string {
	var parts []string
	if r := t.Remote; r != nil {
		switch r.State {
		case "queued":
			parts = append(parts, "queued for a worker")
		case "claimed":
			parts = append(parts, "on worker "+clean(r.Worker)+", preparing")
		default:
			parts = append(parts, "on worker "+clean(r.Worker))
		}
	}
	switch {
	case t.Worktree != nil:
		parts = append(parts, "on branch "+t.Worktree.Branch+" of "+v.path(t.Worktree.Repo))
	case t.Cwd != "":
		parts = append(parts, "in "+v.path(t.Cwd))
	}
	if p := t.Progress; p != nil {
		parts = append(parts, fmt.Sprintf("turn %d", p.Turns))
		if p.LastTool != "" {
			parts = append(parts, p.LastTool)
		}
		parts = append(parts, tokens(p.Tokens)+" tokens")
		cost := fmt.Sprintf("$%.2f", p.CostUSD)
		if p.Estimated {
			cost = "~" + cost
		}
		parts = append(parts, cost)
	}
	return strings.Join(parts, " · ")
}

// endedStates are the states in which status shows a task's work in its
// git worktree.
var endedStates = map[string]bool{"succeeded": true, "failed": true, "timed_out": true, "stopped": true, "cancelled": true}

// workLine says what an ended task's work in its git worktree is: its
// branch and how many files its commits changed, "taskd/l/7 · 3 files
// changed"; "no changes" for a task that succeeded without any.
func workLine(w *status.Worktree, state string) string {
	switch {
	case w.Commit != "":
		return fmt.Sprintf("%s · %d %s changed", w.Branch, w.FilesChanged, plural(w.FilesChanged, "file", "files"))
	case state == "succeeded":
		return w.Branch + " · no changes"
	}
	return w.Branch
}

// tokens renders a count of tokens briefly: 950, 12.3k, 1.2M.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// when renders a time to come, in the viewer's time zone: 20:00 today,
// "Mon 20:00" within a week, "Mar 20 20:00" after; "now" once it has
// passed.
func when(now, at time.Time) string {
	if at.IsZero() || !at.After(now) {
		return "now"
	}
	at = at.In(now.Location())
	y, m, d := now.Date()
	ay, am, ad := at.Date()
	switch {
	case y == ay && m == am && d == ad:
		return at.Format("15:04")
	case at.Sub(now) < 6*24*time.Hour:
		return at.Format("Mon 15:04")
	}
	return at.Format("Jan 2 15:04")
}
