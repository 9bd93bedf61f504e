package status

import (
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/daemon/worktree"
	"github.com/taskd/taskd/taskfile"
)

// Runs is what status shows of where and how a task's agent runs: its
// working directory, its git worktree, its progress while it runs, the
// pause a usage limit put it in, and where its latest attempt's logs are.
type Runs struct {
	Cwd      string    `json:"cwd,omitempty"`      // metadata.taskd.cwd, as the task names it
	Worktree *Worktree `json:"worktree,omitempty"` // metadata.taskd.workspace
	Progress *Progress `json:"progress,omitempty"` // metadata.taskd.progress, while it runs
	// PausedBy is the usage limit that paused the task, in the agent's
	// words, and ResumesAt when it runs again.
	PausedBy  string    `json:"pausedBy,omitempty"`
	ResumesAt time.Time `json:"resumesAt,omitzero"`
	Logs      string    `json:"logs,omitempty"` // the latest attempt's run folder
}

// Worktree is a task's git worktree, as its task records it
// (metadata.taskd.workspace): where, on which branch, of which repository,
// and, once the task has succeeded, its work (package worktree).
type Worktree = worktree.Worktree

// Progress is a running attempt's progress.
type Progress struct {
	Attempt   int     `json:"attempt"`
	Turns     int     `json:"turns"`
	LastTool  string  `json:"lastTool,omitempty"`
	Tokens    int64   `json:"tokens"` // input, output and cache, together
	CostUSD   float64 `json:"costUsd"`
	Estimated bool    `json:"costEstimated,omitempty"`
}

func runsOf(t *taskfile.Task, listDir string) Runs {
	m := t.Metadata.Object("taskd")
	var r Runs
	r.Cwd, _ = m.String("cwd")
	var ws Worktree
	if decode(m, "workspace", &ws) && ws.Path != "" {
		r.Worktree = &ws
	}
	state := task.Of(t)
	var p struct {
		Attempt   int     `json:"attempt"`
		Turns     int     `json:"turns"`
		LastTool  string  `json:"lastTool"`
		CostUSD   float64 `json:"costUsd"`
		Estimated bool    `json:"costEstimated"`
		Tokens    struct{ Input, Output, CacheRead, CacheWrite int64 }
	}
	if state == task.Running && decode(m, "progress", &p) {
		r.Progress = &Progress{Attempt: p.Attempt, Turns: p.Turns, LastTool: p.LastTool, CostUSD: p.CostUSD, Estimated: p.Estimated,
			Tokens: p.Tokens.Input + p.Tokens.Output + p.Tokens.CacheRead + p.Tokens.CacheWrite}
	}
	if state == task.Paused {
		var lim struct {
			Message string `json:"message"`
		}
		decode(m, "pause", &lim)
		r.PausedBy = lim.Message
		if at, ok := m.String("retryAt"); ok {
			r.ResumesAt, _ = time.Parse(time.RFC3339Nano, at)
		}
	}
	if dir, ok := m.String("runDir"); ok && dir != "" {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(listDir, dir)
		}
		r.Logs = dir
	}
	return r
}

// decode reads metadata.taskd's key into v, reporting whether it could.
func decode(m *taskfile.Object, key string, v any) bool {
	raw, ok := m.Get(key)
	if !ok || raw == nil {
		return false
	}
	return json.Unmarshal(taskfile.AppendJSON(nil, raw), v) == nil
}
