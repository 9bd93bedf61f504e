package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// This file holds the daemon's front door: the tools a session uses to
// hand work to the taskd daemon and to follow and steer it. Each is a
// call of the code taskd's commands use (package control for what changes
// a task file, package status for what reads one), with the same
// validation; tasks are named as the commands name them (LIST/ID, an id
// alone), in the server's root only.

type submitIn struct {
	Prompt          string   `json:"prompt,omitempty" jsonschema:"What the agent is to do (a shell script for the exec agent); for a workflow, what the user wants done. Leading /read FILE lines load files into the prompt."`
	Subject         string   `json:"subject,omitempty" jsonschema:"A title (default: the prompt's first line)."`
	List            string   `json:"list,omitempty" jsonschema:"The task list (default: $TASKD_LIST of the server, else default)."`
	Agent           string   `json:"agent,omitempty" jsonschema:"The agent profile or name: claude, exec (a shell script), a configured profile (default: the daemon's default agent)."`
	Model           string   `json:"model,omitempty" jsonschema:"The model for the agent."`
	Workflow        string   `json:"workflow,omitempty" jsonschema:"A workflow for the daemon to walk (ListWorkflows lists them); the prompt is its description."`
	Autonomy        bool     `json:"autonomy,omitempty" jsonschema:"Walk on through the workflow's stage boundaries."`
	PermissionMode  string   `json:"permissionMode,omitempty" jsonschema:"A claude agent's permission mode: default, acceptEdits or plan."`
	Tools           []string `json:"tools,omitempty" jsonschema:"Tools a claude agent may use without asking, such as Read, Edit, Bash(go test:*)."`
	DisallowedTools []string `json:"disallowedTools,omitempty" jsonschema:"Tools a claude agent may not use."`
	Cwd             string   `json:"cwd,omitempty" jsonschema:"Where the agent runs, inside this session's directories (default: the session's directory)."`
	Worktree        bool     `json:"worktree,omitempty" jsonschema:"Run in a git worktree of its own, on a new branch taskd/<list>/<id>; its work is committed there when it succeeds."`
	MaxTurns        int      `json:"maxTurns,omitempty" jsonschema:"Model calls an attempt may take."`
	MaxCostUSD      float64  `json:"maxCostUsd,omitempty" jsonschema:"US dollars an attempt may spend."`
	Timeout         string   `json:"timeout,omitempty" jsonschema:"How long an attempt may run, such as 10m (default 30m)."`
	Retries         int      `json:"retries,omitempty" jsonschema:"Retries after a failure."`
	BlockedBy       []string `json:"blockedBy,omitempty" jsonschema:"Ids of tasks of the same list that must complete first."`
}

type submitOut struct {
	Task   string `json:"task"` // LIST/ID
	File   string `json:"file"`
	Cwd    string `json:"cwd"`
	Daemon string `json:"daemon"` // whether a daemon serves the root
}

type taskIn struct {
	Task string `json:"task" jsonschema:"The task: LIST/ID, or its id alone when one list has it."`
}

type resolveIn struct {
	Task   string `json:"task" jsonschema:"The task that waits for an answer: LIST/ID, or its id."`
	Answer string `json:"answer" jsonschema:"One of the answers the task offers (status shows them): passed, failed, leave; continue, abort, investigate; allow, retry, fail."`
	Note   string `json:"note,omitempty" jsonschema:"Directions for the step that runs next."`
}

type editOut struct {
	Task  string `json:"task"`
	State string `json:"state,omitempty"`
	Done  string `json:"done"`
}

func (s *Server) addDaemonTools() {
	mcp.AddTool(s.srv, &mcp.Tool{Name: "submit", Description: "Hand a task to the taskd daemon: an agent (claude -p, a shell script with agent exec, ...) or a workflow runs it in this session's directory while you go on; the task is a file in ~/.claude/tasks/<list>/. Returns LIST/ID for status, show, wait and logs.",
		Annotations: &mcp.ToolAnnotations{Title: "Submit a task to taskd", OpenWorldHint: ptr(true)}}, s.submit)
	mcp.AddTool(s.srv, &mcp.Tool{Name: "status", Description: "taskd's tasks as taskd status --json shows them: every list, one list, or one task with the tasks below it; state, step, attempt, what it waits for, errors.",
		Annotations: &mcp.ToolAnnotations{Title: "Tasks and their states", ReadOnlyHint: true}}, s.status)
	mcp.AddTool(s.srv, &mcp.Tool{Name: "show", Description: "What happened to a task: its state, the agent's summary, cost, turns, duration, the changes in its worktree, its children, the end of its transcript.",
		Annotations: &mcp.ToolAnnotations{Title: "What happened to a task", ReadOnlyHint: true}}, s.show)
	mcp.AddTool(s.srv, &mcp.Tool{Name: "wait", Description: "Wait, at most timeout seconds (default 60, at most 600), until a task ends or needs a person's answer; returns how it ended, or that it is still running.",
		Annotations: &mcp.ToolAnnotations{Title: "Wait for a task", ReadOnlyHint: true}}, s.wait)
	mcp.AddTool(s.srv, &mcp.Tool{Name: "resolve", Description: "Answer a task that waits for a person (state needs_human, or a workflow at a stage boundary) with one of the answers it offers, and a note for the step that runs next.",
		Annotations: &mcp.ToolAnnotations{Title: "Answer a task", IdempotentHint: true}}, s.resolve)
	mcp.AddTool(s.srv, &mcp.Tool{Name: "cancel", Description: "Cancel a task: a running agent is stopped, the tasks below it are cancelled with it.",
		Annotations: &mcp.ToolAnnotations{Title: "Cancel a task", DestructiveHint: ptr(true), IdempotentHint: true}}, s.cancel)
	mcp.AddTool(s.srv, &mcp.Tool{Name: "retry", Description: "Run a failed, cancelled, timed-out or completed task again (a workflow from its current step).",
		Annotations: &mcp.ToolAnnotations{Title: "Run a task again", OpenWorldHint: ptr(true)}}, s.retry)
	mcp.AddTool(s.srv, &mcp.Tool{Name: "logs", Description: "The end of a task's agent output: the readable transcript of a claude agent, the output of others (stderr: its standard error); the latest attempt unless attempt is given.",
		Annotations: &mcp.ToolAnnotations{Title: "A task's output", ReadOnlyHint: true}}, s.logs)
}

func ptr[T any](v T) *T { return &v }

// submit writes a new task, as taskd submit does, in the session's
// directory.
func (s *Server) submit(ctx context.Context, req *mcp.CallToolRequest, in submitIn) (*mcp.CallToolResult, any, error) {
	sc, ask := s.clientScope(req)
	if ask != nil {
		return ask, nil, nil
	}
	cwd, err := s.workingDir(sc, in.Cwd)
	if err != nil {
		return nil, nil, err
	}
	if in.PermissionMode == "bypassPermissions" && !s.opts.AllowBypass {
		return nil, nil, errors.New("permissionMode bypassPermissions is not offered through this server (start it with taskd mcp --allow-bypass to offer it): use acceptEdits with the tools the agent needs")
	}
	r := control.Request{Prompt: in.Prompt, Subject: in.Subject, Agent: in.Agent, Model: in.Model, Workflow: in.Workflow,
		Autonomy: in.Autonomy, Cwd: cwd, Worktree: in.Worktree, PermissionMode: in.PermissionMode, Tools: in.Tools,
		DisallowedTools: in.DisallowedTools, MaxTurns: in.MaxTurns, MaxCostUSD: in.MaxCostUSD, Timeout: in.Timeout,
		Retries: in.Retries, BlockedBy: in.BlockedBy}
	t, err := r.Task(nil)
	switch {
	case errors.Is(err, control.ErrNoPrompt):
		return nil, nil, errors.New("give a prompt, or a workflow")
	case errors.Is(err, control.ErrAutonomyNeedsWorkflow):
		return nil, nil, errors.New("autonomy applies to a workflow: name one")
	case errors.Is(err, control.ErrNegativeBound):
		return nil, nil, errors.New("maxTurns and maxCostUsd are bounds ≥ 0")
	case err != nil:
		return nil, nil, err
	}
	if _, err := task.ReadSpec(t); err != nil {
		return nil, nil, err
	}
	list := firstOf(in.List, s.opts.DefaultList, "default")
	if err := s.checkRoot(); err != nil {
		return nil, nil, err
	}
	dir, err := control.OpenList(s.opts.Root, list, true)
	if err != nil {
		return nil, nil, err
	}
	if err := s.checkList(dir.Path()); err != nil {
		return nil, nil, err
	}
	created, err := control.Submit(ctx, dir, t)
	if err != nil {
		return nil, nil, err
	}
	return nil, submitOut{Task: list + "/" + created.ID, File: dir.File(created.ID), Cwd: cwd, Daemon: s.daemonState()}, nil
}

// workingDir is where a submitted task runs: dir (relative to the
// session's directory) inside the session's directories, else the
// session's directory itself; never the daemon's default, the home.
func (s *Server) workingDir(sc *scope, dir string) (string, error) {
	if sc.project() == "" {
		return "", errNoRoot
	}
	p := sc.project()
	if dir != "" {
		p = sc.abs(dir)
	}
	if err := sc.inRoots(p); err != nil {
		return "", err
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return "", fmt.Errorf("the working directory: %w", err)
	case !fi.IsDir():
		return "", fmt.Errorf("the working directory %s is not a directory", p)
	}
	return p, nil
}

// daemonState says whether a daemon serves the root, for a client that
// submitted a task: without one, the task waits.
func (s *Server) daemonState() string {
	held, pid, err := daemon.LockHolder(s.opts.Root)
	switch {
	case err != nil:
		return "unknown: " + err.Error()
	case held:
		return fmt.Sprintf("running (pid %d)", pid)
	}
	return "not running: the task waits until one runs (taskd start, or taskd run)"
}

// taskRef resolves how a client names a task, in the server's root only,
// and opens its list, which must be one a daemon serves.
func (s *Server) taskRef(name string) (control.Ref, *taskfile.Dir, error) {
	if err := s.checkRoot(); err != nil {
		return control.Ref{}, nil, err
	}
	ref, err := control.ParseRef(s.opts.Root, name, s.opts.DefaultList)
	if err != nil {
		return ref, nil, err
	}
	if !taskfile.ValidID(ref.ID) {
		return ref, nil, fmt.Errorf("task %q: %q is not a task id (1-128 of A-Z a-z 0-9 _ -)", name, ref.ID)
	}
	dir, err := control.OpenList(ref.Root, ref.List, false)
	if err != nil {
		return ref, nil, err
	}
	if err := s.checkList(dir.Path()); err != nil {
		return ref, nil, err
	}
	return ref, dir, nil
}

// edit applies a change of control's to the task a client names.
func (s *Server) edit(ctx context.Context, name, done string, fn func(context.Context, *taskfile.Dir, string) (*taskfile.Task, error)) (*mcp.CallToolResult, any, error) {
	ref, dir, err := s.taskRef(name)
	if err != nil {
		return nil, nil, err
	}
	t, err := fn(ctx, dir, ref.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", ref, err)
	}
	return nil, editOut{Task: ref.String(), State: string(task.Of(t)), Done: done}, nil
}

func (s *Server) resolve(ctx context.Context, _ *mcp.CallToolRequest, in resolveIn) (*mcp.CallToolResult, any, error) {
	return s.edit(ctx, in.Task, "answered "+in.Answer+": the daemon goes on", func(ctx context.Context, dir *taskfile.Dir, id string) (*taskfile.Task, error) {
		return control.ResolveNote(ctx, dir, id, in.Answer, in.Note)
	})
}

func (s *Server) cancel(ctx context.Context, _ *mcp.CallToolRequest, in taskIn) (*mcp.CallToolResult, any, error) {
	return s.edit(ctx, in.Task, "cancel requested: the daemon stops it", control.CancelTask)
}

func (s *Server) retry(ctx context.Context, _ *mcp.CallToolRequest, in taskIn) (*mcp.CallToolResult, any, error) {
	return s.edit(ctx, in.Task, "will run again", control.StartTask)
}

// listDir is the directory of ref's list.
func listDir(ref control.Ref) string { return filepath.Join(ref.Root, ref.List) }
