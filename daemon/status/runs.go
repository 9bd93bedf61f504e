package status

import (
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/daemon/worktree"
	"github.com/taskd/taskd/internal/fsroot"
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
	// PausedProfile is the profile the limit paused with the task.
	PausedProfile string `json:"pausedProfile,omitempty"`
	Logs          string `json:"logs,omitempty"` // the latest attempt's run folder
	// OutputCut is how many bytes the cap cut from the middle of each log
	// of the latest recorded attempt (metadata.taskd.result.outputCut).
	OutputCut map[string]int64 `json:"outputCut,omitempty"`
	// Summary is what the agent's latest attempt said it did, and
	// CostUSD what that attempt cost, as metadata.taskd.result records
	// them (taskd show adds up every attempt).
	Summary string   `json:"summary,omitempty"`
	CostUSD *float64 `json:"costUsd,omitempty"`
	// CwdNote says why a task of a Claude Code session's list runs in
	// the home directory (metadata.taskd.cwdNote).
	CwdNote string `json:"cwdNote,omitempty"`
	// Remote says where a running attempt sent to a worker is
	// (docs/distributed.md).
	Remote *Remote `json:"remote,omitempty"`
}

// Remote is where a running attempt sent to a worker is: State is
// "queued" (no worker has claimed it yet), "claimed" (Worker prepares its
// agent) or "running" (its agent runs on Worker).
type Remote struct {
	Worker string `json:"worker,omitempty"`
	State  string `json:"state"`
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
	rec := task.RecordOf(t)
	var r Runs
	r.Cwd, _ = m.String("cwd")
	var ws Worktree
	if decode(rec.Workspace, &ws) && ws.Path != "" {
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
	if state == task.Running && decode(rec.Progress, &p) {
		r.Progress = &Progress{Attempt: p.Attempt, Turns: p.Turns, LastTool: p.LastTool, CostUSD: p.CostUSD, Estimated: p.Estimated,
			Tokens: p.Tokens.Input + p.Tokens.Output + p.Tokens.CacheRead + p.Tokens.CacheWrite}
	}
	if state == task.Paused {
		var lim struct {
			Message string `json:"message"`
			Profile string `json:"profile"`
		}
		decode(rec.Pause, &lim)
		r.PausedBy, r.PausedProfile = lim.Message, lim.Profile
		r.ResumesAt = rec.RetryAt
	}
	var res struct {
		Summary   string           `json:"summary"`
		CostUSD   *float64         `json:"costUsd"`
		OutputCut map[string]int64 `json:"outputCut"`
	}
	if decode(rec.Result, &res) {
		r.Summary, r.CostUSD = res.Summary, res.CostUSD
		if len(res.OutputCut) > 0 {
			r.OutputCut = res.OutputCut
		}
	}
	r.CwdNote = rec.CwdNote
	if dir := rec.RunDir; dir != "" {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(listDir, dir)
		}
		r.Logs = dir
		if state == task.Running {
			r.Remote = remoteOf(listDir, dir)
		}
	}
	return r
}

// remoteOf reads where the attempt of run folder dir is, from its
// cmd.json, if a worker runs it.
func remoteOf(listDir, dir string) *Remote {
	data, err := fsroot.ReadFile(listDir, filepath.Join(dir, "cmd.json"), 1<<20)
	if err != nil {
		return nil
	}
	var cmd struct {
		Remote *Remote `json:"remote"`
	}
	if json.Unmarshal(data, &cmd) != nil || cmd.Remote == nil || cmd.Remote.State == "" {
		return nil
	}
	return cmd.Remote
}

// decode reads metadata.taskd's key into v, reporting whether it could.
func decode(o *taskfile.Object, v any) bool {
	if o == nil {
		return false
	}
	return json.Unmarshal(taskfile.AppendJSON(nil, o), v) == nil
}
