package job

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// NewAttempt prepares attempt sp.Attempt of task t, run by the job: the
// agent profile (the task's explicit agent, else agentName, else the
// default), the prompt, the working directory and the timeout. Its agent
// waits for the job's slot.
func (j *Job) NewAttempt(t *taskfile.Task, sp task.Spec, agentName, step string) (*agent.Attempt, error) {
	_, ownerProfile := task.Addressed(t)
	name, explicit := sp.Agent, true
	if name == "" {
		name = ownerProfile
	}
	if name == "" {
		name, explicit = agentName, false
	}
	prof, err := j.Config.ResolveAgent(name, explicit)
	if err != nil {
		return nil, err
	}
	prompt := t.Description
	if sp.HasPrompt {
		prompt = sp.Prompt
	}
	cwd, err := j.Cwd(sp.Cwd)
	if err != nil {
		return nil, err
	}
	timeout := j.Config.Timeout
	if prof.Timeout > 0 {
		timeout = prof.Timeout
	}
	if sp.Timeout > 0 {
		timeout = sp.Timeout
	}
	if sp.Worktree {
		if cwd, err = j.workspace(t, sp, cwd); err != nil {
			return nil, err
		}
	}
	a := &agent.Attempt{
		ListDir: j.List.Path(), ListID: j.List.ID, TaskID: t.ID, Parent: sp.Parent, N: sp.Attempt, Step: step,
		Profile: prof, Prompt: prompt, Cwd: cwd, Timeout: timeout, Spec: sp, Gate: j, Budget: j.budget(sp, prof),
		Clock: j.Now, // a limit's reset is read on the clock the pause is decided by
	}
	if !agent.IsModel(prof) {
		a.Script = prompt // a program, a shell script, gets the prompt's content alone
	}
	a.Session = agent.NewSession(prof) // known from the start, if its kind gives one (agent.Session)
	return a, nil
}

// Cwd resolves metadata.taskd.cwd: ~ is the home directory
// (Config.Home), a relative path is relative to it, and no cwd means the
// list's configured cwd, else the project directory of the Claude Code
// session whose list it is (sessiondir.go), else the home directory.
func (j Scope) Cwd(cwd string) (string, error) {
	if cwd == "" {
		cwd = j.Config.ListSettings[j.List.ID].Cwd
	}
	if cwd == "" {
		cwd, _ = j.sessionDir()
	}
	home := j.Config.Home
	if home == "" && (cwd == "" || !filepath.IsAbs(cwd)) {
		return "", fmt.Errorf("no working directory: set metadata.taskd.cwd, or the list's cwd in the configuration (the home directory is not known)")
	}
	switch {
	case cwd == "" || cwd == "~":
		return home, nil
	case strings.HasPrefix(cwd, "~/"):
		return filepath.Join(home, cwd[2:]), nil
	case !filepath.IsAbs(cwd):
		return filepath.Join(home, cwd), nil
	}
	return filepath.Clean(cwd), nil
}

// budget is what an attempt of a task with spec sp, run by profile prof,
// may spend: the task's maxTurns and maxCostUsd, else its list's, else
// the profile's (docs/agents.md).
func (j *Job) budget(sp task.Spec, prof *config.Profile) agent.Budget {
	l := j.Config.ListSettings[j.List.ID]
	b := agent.Budget{MaxTurns: sp.MaxTurns, MaxCostUSD: sp.MaxCostUSD}
	if b.MaxTurns == 0 {
		b.MaxTurns = cmpOr(l.MaxTurns, prof.MaxTurns)
	}
	if b.MaxCostUSD == 0 {
		b.MaxCostUSD = cmpOr(l.MaxCostUSD, prof.MaxCostUSD)
	}
	return b
}

func cmpOr[T int | float64](a, b T) T {
	if a != 0 {
		return a
	}
	return b
}
