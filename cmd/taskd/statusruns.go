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

// tokens renders a count of tokens briefly (status.Tokens).
func tokens(n int64) string { return status.Tokens(n) }

// when renders a time to come (status.When).
func when(now, at time.Time) string { return status.When(now, at) }
