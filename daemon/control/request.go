package control

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/taskfile"
)

// A Request is what a person asks of a new task: what taskd submit takes
// as flags, and a Claude Code session as the arguments of the MCP submit
// tool. Task turns it into the task file Submit writes.
type Request struct {
	Prompt   string // the agent's prompt; a workflow's description
	Subject  string // default: the prompt's first line that is not a command
	Agent    string // a profile or agent name
	Model    string
	Workflow string // a workflow to walk (metadata.workflowType)
	Autonomy bool   // walk on through the workflow's stage boundaries
	// Cwd is where the agent runs: "~" or "~/…" is left for the daemon
	// (the home directory), a relative path is resolved against the
	// current directory. Empty keeps the one the base task names, else
	// the current directory.
	Cwd             string
	Worktree        bool // a git worktree of its own
	PermissionMode  string
	Tools           []string
	DisallowedTools []string
	MaxTurns        int     // 0: no bound of the task's own
	MaxCostUSD      float64 // 0: no bound of the task's own
	Timeout         string  // a duration, such as 10m
	Retries         int
	BlockedBy       []string
}

// Errors of Check: what a Request lacks or has wrong. Callers say what to
// do about each in their own terms (a flag, an argument).
var (
	ErrNoPrompt              = errors.New("no prompt and no workflow")
	ErrAutonomyNeedsWorkflow = errors.New("autonomy applies to a workflow")
	ErrNegativeBound         = errors.New("max turns and max cost are bounds ≥ 0")
)

// Check reports what is wrong with r as a task on its own (base, when the
// request adds to a whole task given as JSON, lifts the need for a
// prompt and a workflow).
func (r Request) Check(base bool) error {
	switch {
	case !base && r.Prompt == "" && r.Workflow == "":
		return ErrNoPrompt
	case !base && r.Autonomy && r.Workflow == "":
		return ErrAutonomyNeedsWorkflow
	case r.MaxTurns < 0 || r.MaxCostUSD < 0:
		return ErrNegativeBound
	}
	return nil
}

// Task returns the task file r asks for: base (a whole task read as JSON,
// whose id is dropped) with r's fields added, or a new task when base is
// nil. Without a base, the prompt is metadata.taskd.prompt, or the
// description of a workflow task.
func (r Request) Task(base *taskfile.Task) (*taskfile.Task, error) {
	if err := r.Check(base != nil); err != nil {
		return nil, err
	}
	t := base
	if t == nil {
		t = &taskfile.Task{}
	} else {
		t = t.Clone()
		t.ID = ""
	}
	m := t.EnsureMetadata().EnsureObject("taskd")
	set := func(k, v string) {
		if v != "" {
			m.Set(k, v)
		}
	}
	if r.Prompt != "" && base == nil {
		if r.Workflow != "" {
			t.Description = r.Prompt
		} else {
			m.Set("prompt", r.Prompt)
		}
	}
	set("agent", r.Agent)
	set("model", r.Model)
	if err := setCwd(m, r.Cwd); err != nil {
		return nil, err
	}
	set("timeout", r.Timeout)
	set("permissionMode", r.PermissionMode)
	if len(r.Tools) > 0 {
		m.Set("tools", r.Tools)
	}
	if len(r.DisallowedTools) > 0 {
		m.Set("disallowedTools", r.DisallowedTools)
	}
	if r.Worktree {
		m.Set("worktree", true)
	}
	if r.MaxTurns > 0 {
		m.Set("maxTurns", r.MaxTurns)
	}
	if r.MaxCostUSD > 0 {
		m.Set("maxCostUsd", r.MaxCostUSD)
	}
	if r.Retries > 0 {
		m.Set("retries", r.Retries)
	}
	if r.Workflow != "" {
		md := t.EnsureMetadata()
		md.Set("workflowType", r.Workflow)
		// The steps are told userDescription, and the workflow's first
		// write replaces the description: the prompt goes there, else
		// the subject.
		if _, ok := md.String("userDescription"); !ok {
			md.Set("userDescription", firstNonEmpty(r.Prompt, r.Subject))
		}
	}
	if r.Autonomy {
		t.EnsureMetadata().Set("autonomy", true)
	}
	t.BlockedBy = append(t.BlockedBy, r.BlockedBy...)
	if r.Subject != "" {
		t.Subject = r.Subject
	}
	if t.Subject == "" {
		t.Subject = SubjectOf(r.Prompt)
	}
	return t, nil
}

// SubjectOf is the subject a prompt gives a task: its first line that is
// not a command (/read, /push, …), or its first line if all are, cut to
// 80 characters.
func SubjectOf(prompt string) string {
	for line := range strings.Lines(prompt) {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "/") {
			return FirstLine(l)
		}
	}
	return FirstLine(prompt)
}

// FirstLine is s's first line, trimmed and cut to 80 characters.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// setCwd records where the task's agent runs: dir resolved against the
// current directory (~ is left for the daemon: the home directory), else
// the current directory, unless the task (a base) names one.
func setCwd(m *taskfile.Object, dir string) error {
	if dir == "" {
		if _, ok := m.String("cwd"); ok {
			return nil
		}
		dir = "."
	}
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		m.Set("cwd", dir)
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("the working directory: %w", err)
	}
	m.Set("cwd", abs)
	return nil
}
