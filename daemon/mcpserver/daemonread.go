package mcpserver

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/taskfile"
)

// This file holds the tools that read how tasks go: status, show, wait
// and logs.

type statusIn struct {
	Task string `json:"task,omitempty" jsonschema:"One task (LIST/ID, or its id), shown with the tasks below it."`
	List string `json:"list,omitempty" jsonschema:"Only this list."`
	All  bool   `json:"all,omitempty" jsonschema:"Also the tasks not addressed to taskd."`
}

type statusOut struct {
	Root   string        `json:"root"`
	Daemon string        `json:"daemon"`
	Lists  []status.List `json:"lists"`
}

// status is taskd status --json.
func (s *Server) status(_ context.Context, _ *mcp.CallToolRequest, in statusIn) (*mcp.CallToolResult, any, error) {
	if err := s.checkRoot(); err != nil {
		return nil, nil, err
	}
	var lists []string
	if in.List != "" {
		if !taskfile.ValidID(in.List) {
			return nil, nil, fmt.Errorf("list %q: a list name is 1-128 of A-Z a-z 0-9 _ -", in.List)
		}
		lists = []string{in.List}
	}
	if in.Task != "" {
		ref, _, err := s.taskRef(in.Task)
		if err != nil {
			return nil, nil, err
		}
		snap, err := treeOf(ref)
		if err != nil {
			return nil, nil, err
		}
		return nil, statusOut{Root: s.opts.Root, Daemon: s.daemonState(), Lists: snap}, nil
	}
	snap, err := status.Read(s.opts.Root, lists, in.All, daemon.HeldTasks(s.opts.Root))
	if err != nil {
		return nil, nil, err
	}
	return nil, statusOut{Root: s.opts.Root, Daemon: s.daemonState(), Lists: snap}, nil
}

// treeOf reads ref's list as taskd status LIST/ID does: ref's task and
// the tasks below it.
func treeOf(ref control.Ref) ([]status.List, error) {
	snap, err := status.Read(ref.Root, []string{ref.List}, true, daemon.HeldTasks(ref.Root))
	if err != nil {
		return nil, err
	}
	return status.Subtree(snap, ref.ID)
}

// showLines is how many lines of output show returns.
const showLines = 20

// show is taskd show: what happened to a task (status.Show).
func (s *Server) show(_ context.Context, _ *mcp.CallToolRequest, in taskIn) (*mcp.CallToolResult, any, error) {
	ref, _, err := s.taskRef(in.Task)
	if err != nil {
		return nil, nil, err
	}
	d, err := status.Show(ref.Root, ref.List, ref.ID, status.ShowOptions{Held: daemon.HeldTasks(ref.Root), Lines: showLines})
	if err != nil {
		return nil, nil, err
	}
	return nil, d, nil
}

type waitIn struct {
	Task    string  `json:"task" jsonschema:"The task: LIST/ID, or its id."`
	Timeout float64 `json:"timeout,omitempty" jsonschema:"Seconds to wait at most (default 60, at most 600)."`
}

type waitOut struct {
	Task  string `json:"task"`
	Ended bool   `json:"ended"`
	OK    bool   `json:"ok"`
	State string `json:"state,omitempty"`
	// Note says how it ended, why it does not go on by itself, or that
	// it is still running.
	Note    string   `json:"note"`
	Options []string `json:"options,omitempty"` // the answers a task that needs a person accepts
	Summary string   `json:"summary,omitempty"` // the agent's summary of its last attempt
}

// Bounds of wait.
const (
	waitDefault = 60 * time.Second
	waitMax     = 600 * time.Second
	waitPoll    = 2 * time.Second // a watch can lose events: the file is read again this often
)

// wait waits until a task ends or needs a person, at most the timeout,
// reporting progress on the way.
func (s *Server) wait(ctx context.Context, req *mcp.CallToolRequest, in waitIn) (*mcp.CallToolResult, any, error) {
	ref, _, err := s.taskRef(in.Task)
	if err != nil {
		return nil, nil, err
	}
	limit := waitDefault
	if in.Timeout > 0 {
		limit = min(time.Duration(in.Timeout*float64(time.Second)), waitMax)
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, nil, err
	}
	defer w.Close()
	if err := w.Add(listDir(ref)); err != nil {
		return nil, nil, err
	}
	w.Add(area.RejectedDir(listDir(ref))) // its note, if the daemon refuses it
	poll := time.NewTicker(waitPoll)
	defer poll.Stop()
	p := progress{req: req, start: time.Now(), total: limit}
	for {
		o := status.ReadOutcome(listDir(ref), ref.ID)
		if o.Ended || o.NeedsHuman {
			return nil, s.outcome(ref, o), nil
		}
		p.report(ctx, s.progressNote(ref, o))
		select {
		case <-ctx.Done():
			out := s.outcome(ref, o)
			out.Note = fmt.Sprintf("still %s after %s: wait again, or look with show or logs", firstOf(o.State, "pending"), limit.Round(time.Second))
			return nil, out, nil
		case <-w.Events:
		case <-w.Errors:
		case <-poll.C:
		}
	}
}

// outcome is what wait returns for a task whose outcome is o.
func (s *Server) outcome(ref control.Ref, o status.Outcome) waitOut {
	out := waitOut{Task: ref.String(), Ended: o.Ended, OK: o.OK, State: o.State}
	reason := control.FirstLine(o.Error)
	switch {
	case o.State == "missing":
		out.Note = "the task does not exist (or was removed)"
	case o.State == "rejected":
		out.Note = "the daemon refused the file: " + reason
	case o.State == "not_taskd":
		out.Note = "the task is not addressed to taskd (no owner \"taskd\", no metadata.taskd): it is Claude Code's own, and no daemon runs it"
	case o.Ended && reason != "":
		out.Note = o.State + ": " + reason
	case o.Ended:
		out.Note = o.State
	}
	if t := s.statusOf(ref); t != nil {
		if o.NeedsHuman {
			out.Note = "needs a person: " + firstOf(t.WaitingFor, "an answer") + "; answer with resolve"
			out.Options = t.Options
		}
	}
	out.Summary = o.Summary
	return out
}

// progressNote says how a task that has not ended goes.
func (s *Server) progressNote(ref control.Ref, o status.Outcome) string {
	note := ref.String() + " " + firstOf(o.State, "pending")
	if t := s.statusOf(ref); t != nil {
		if t.Step != "" {
			note += " · step " + t.Step
		}
		if p := t.Progress; p != nil {
			note += fmt.Sprintf(" · turn %d · $%.2f", p.Turns, p.CostUSD)
			if p.LastTool != "" {
				note += " · " + p.LastTool
			}
		}
	}
	return note
}

// statusOf is ref's task as taskd status shows it, or nil.
func (s *Server) statusOf(ref control.Ref) *status.Task {
	snap, err := treeOf(ref)
	if err != nil {
		return nil
	}
	for i := range snap[0].Tasks {
		if t := &snap[0].Tasks[i]; t.ID == ref.ID {
			return t
		}
	}
	return nil
}

// progress sends a client's call MCP progress notifications, when the
// client asked for them with a progress token.
type progress struct {
	req   *mcp.CallToolRequest
	start time.Time
	total time.Duration
	last  string
	sent  time.Time
}

// progressEvery is how often progress is reported when nothing changes.
const progressEvery = 5 * time.Second

func (p *progress) report(ctx context.Context, note string) {
	token := p.req.Params.GetProgressToken()
	if token == nil || note == p.last && time.Since(p.sent) < progressEvery {
		return
	}
	p.last, p.sent = note, time.Now()
	p.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Message: note,
		Progress: time.Since(p.start).Seconds(), Total: p.total.Seconds()})
}

type logsIn struct {
	Task    string `json:"task" jsonschema:"The task: LIST/ID, or its id."`
	Attempt int    `json:"attempt,omitempty" jsonschema:"The attempt (default: the latest)."`
	Lines   int    `json:"lines,omitempty" jsonschema:"How many of the last lines (default 100, at most 2000)."`
	Stderr  bool   `json:"stderr,omitempty" jsonschema:"The agent's standard error instead."`
}

// logs is the end of taskd logs: the last lines of an attempt's log, read
// as taskd logs and taskd ui read it (status.Follower), with the agent's
// standard error instead when the log asked for is empty.
func (s *Server) logs(_ context.Context, _ *mcp.CallToolRequest, in logsIn) (*mcp.CallToolResult, any, error) {
	ref, dir, err := s.taskRef(in.Task)
	if err != nil {
		return nil, nil, err
	}
	if _, err := dir.Read(ref.ID); err != nil {
		return nil, nil, err
	}
	n := in.Attempt
	if n <= 0 {
		if n, _ = status.LatestAttempt(dir, ref.ID); n == 0 {
			return nil, nil, fmt.Errorf("task %s has not run yet", ref)
		}
	}
	if fi, err := os.Lstat(area.RunDir(dir.Path(), ref.ID, n)); err != nil || !fi.IsDir() {
		return nil, nil, fmt.Errorf("task %s has no attempt %d", ref, n)
	}
	lines := in.Lines
	if lines <= 0 {
		lines = 100
	}
	name := func(runDir string) string { return status.LogName(runDir, in.Stderr, false) }
	text, log := tailOf(dir.Path(), ref.ID, n, name)
	if strings.TrimSpace(text) == "" && !in.Stderr {
		if errText, errLog := tailOf(dir.Path(), ref.ID, n, func(string) string { return "stderr.log" }); strings.TrimSpace(errText) != "" {
			text, log = errText, log+" is empty; "+errLog
		}
	}
	header := fmt.Sprintf("%s attempt %d, %s:\n", ref, n, log)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: header + lastLines(text, min(lines, 2000))}}}, nil, nil
}

// tailBytes bounds what logs reads of a log.
const tailBytes = 256 << 10

// tailOf reads the last tailBytes of the log name names of attempt n of
// task id of the list at listDir, and that log's name.
func tailOf(listDir, id string, n int, name func(runDir string) string) (text, log string) {
	f := status.NewFollower(listDir, id, name, n)
	f.SetTail(tailBytes)
	var buf strings.Builder
	f.Read(&buf, func() (int, bool) { return n, true })
	return buf.String(), name(f.Dir())
}

// lastLines returns the last n lines of text, ending in a line break.
func lastLines(text string, n int) string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return ""
	}
	cut := len(text)
	for i := 0; i < n && cut >= 0; i++ {
		cut = strings.LastIndexByte(text[:cut], '\n')
	}
	return text[cut+1:] + "\n"
}
