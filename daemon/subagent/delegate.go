// Package subagent is the subagent commands: /delegate hands a task to a
// child of a given agent type, with permissions no wider than its
// parent's; /handoff waits for such a child (or monitors it, mirroring its
// events into the parent's stream) and retries, aborts or escalates when
// it fails; /converge combines several children's results by a strategy
// (merge, vote, consensus, first success), with conflicts left to a rule
// or to a person. They run as prompt lines before a task's agent starts
// and as taskd commands inside it (which leave a verdict the attempt's end
// applies). docs/subagents.md is the manual.
package subagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/catalog"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// DelegateOptions are the choices of Delegate beyond the /delegate line.
type DelegateOptions struct {
	// Name is the child's name; empty means the next free <type>-<n>.
	Name string
	// Log receives a warning for every bypassPermissions grant; nil for
	// none.
	Log *slog.Logger
	// AnswerRequired marks the child as one whose answer a vote or a
	// consensus compares (metadata.taskd.answerRequired).
	AnswerRequired bool

	emit func(eventlog.Event) // the daemon's event log; nil: AppendEvent
}

// Delegate starts a subagent of task parentID in dir, as /delegate and
// taskd delegate do: a child task (daemon.Push, started at once, in the
// parent's parallel collection) with metadata.taskd.agentType,
// permissionMode, tools, inheritContext and spawnedAt (with
// --inherit-context also the parent's context and inheritSession, the
// parent's last Claude session), its agent the agent type (which the
// configuration's "agents" maps to a profile) and its timeout the line's. The child's permission mode and tools are the line's
// or its type's, and may only narrow the parent's (see scope.go); a
// child never inherits allowBypass. It logs SubagentSpawned and a
// TranscriptEvent subagent_start.
//
// When the scope is wider than the parent's, the child is still created,
// but as failed with the reason in its error, and it never runs: Delegate
// logs SubagentError and returns the child with an error wrapping ErrScope.
// Other errors (the parent is missing, the prompt does not parse, limits)
// create nothing.
func (pt Parent) Delegate(ctx context.Context, req *prompt.Delegate, opt DelegateOptions) (*taskfile.Task, error) {
	cfg, dir, parentID := pt.Config, pt.Dir, pt.ID
	emit := opt.emit
	if emit == nil {
		emit = func(ev eventlog.Event) { AppendEvent(dir.Path(), ev) }
	}
	parent, err := dir.Read(parentID)
	if err != nil {
		return nil, fmt.Errorf("read parent %s: %w", parentID, err)
	}
	at, err := cfg.LookupAgentType(req.AgentType)
	if err != nil {
		return nil, err
	}
	ps := scopeOf(parent)
	sc, scopeErr := childScope(parentID, ps, at, req.PermissionMode, req.Tools)
	name := opt.Name
	if name == "" {
		name = nextTypeName(dir, parent, at.Name)
	}
	now := time.Now()
	extra := map[string]any{
		"agentType": at.Name, "permissionMode": sc.Mode, "inheritContext": req.InheritContext,
		"spawnedAt": task.Stamp(now), "allowBypass": false,
	}
	if sc.Tools != nil {
		extra["tools"] = sc.Tools
	}
	if opt.AnswerRequired {
		extra["answerRequired"] = true
	}
	text := req.Task
	if req.InheritContext {
		var system string
		text, system = inheritContext(cfg, dir, parent, at.Name, req.Task)
		extra["systemPrompt"] = system
		if s, ok := task.RecordOf(parent).Result.String("sessionId"); ok && s != "" {
			extra["inheritSession"] = s
		}
	}
	// Created queued, so that SubagentSpawned comes before anything the
	// child does; released below.
	state := task.Queued
	if scopeErr != nil {
		// Recorded as failed before it could run: it is never started, and
		// its result (the failure) is still delivered to the parent.
		state = task.Failed
		extra["error"] = scopeErr.Error()
		extra["finishedAt"] = task.Stamp(now)
		extra["endLogged"] = 0
	}
	child, err := children.Push(ctx, cfg, dir, parentID, children.PushOptions{Name: name, Prompt: text, Agent: at.Name,
		Timeout: req.Timeout, Start: true, State: state, Extra: extra})
	if err != nil {
		return nil, err
	}
	fields := subagentFields(dir.Path(), child)
	if scopeErr != nil {
		fields["error"] = scopeErr.Error()
		fields["error_kind"] = "permission"
		fields["requested_permission_mode"] = req.PermissionMode
		fields["parent_permission_mode"] = ps.Mode
		emit(eventlog.Event{Type: eventlog.SubagentError, Task: child.ID, Parent: parentID, Data: fields})
		emit(eventlog.Event{Type: eventlog.TaskFailed, Task: child.ID, Parent: parentID, Data: map[string]any{"error": scopeErr.Error()}})
		return child, scopeErr
	}
	if sc.Mode == "bypassPermissions" {
		fields["bypass_allowed_by"] = "metadata.taskd.allowBypass of task " + parentID
		if opt.Log != nil {
			opt.Log.Warn("subagent granted bypassPermissions", "task", child.ID, "parent", parentID, "allowedBy", "metadata.taskd.allowBypass")
		}
	}
	emit(eventlog.Event{Type: eventlog.SubagentSpawned, Task: child.ID, Parent: parentID, Data: fields})
	start := map[string]any{"event_type": trSubagentStart}
	for k, v := range fields {
		start[k] = v
	}
	emit(eventlog.Event{Type: eventlog.TranscriptEvent, Task: child.ID, Parent: parentID, Data: start})
	return releaseQueued(ctx, dir, child.ID)
}

// releaseQueued lets a queued child run.
func releaseQueued(ctx context.Context, dir *taskfile.Dir, id string) (*taskfile.Task, error) {
	return dir.Update(ctx, id, func(t *taskfile.Task) error {
		if task.Of(t) == task.Queued {
			_, err := task.Move(t, task.Release)
			return err
		}
		return nil
	})
}

// nextTypeName is the first <type>-<n> (n = 1, 2, …) no child of parent has.
func nextTypeName(dir *taskfile.Dir, parent *taskfile.Task, agentType string) string {
	names := children.Names(dir, parent)
	for n := 1; ; n++ {
		if name := fmt.Sprintf("%s-%d", agentType, n); !slices.Contains(names, name) {
			return name
		}
	}
}

// inheritContext gives a subagent its parent's context: the parent's
// leading /read lines come before the task (the child reads the same
// files), and the parent's prompt content goes into the child's system
// prompt (claude: --append-system-prompt). (Delegate also records the
// parent's last Claude session, which the child resumes as its own.)
func inheritContext(cfg *config.Config, dir *taskfile.Dir, parent *taskfile.Task, agentType, tf string) (text, system string) {
	sp, _ := task.ReadSpec(parent)
	script, err := prompt.Parse(task.Prompt(parent, sp), prompt.ParseOptions{Commands: catalog.LoadCommands(cfg.Dir, dir.Path()).Has})
	var reads []string
	content := strings.TrimSpace(task.Prompt(parent, sp))
	if err == nil {
		content = script.Content
		for _, st := range script.Leading {
			if r, ok := st.Cmd.(*prompt.Read); ok {
				reads = append(reads, r.String())
			}
		}
	}
	text = tf
	if len(reads) > 0 {
		text = strings.Join(reads, "\n") + "\n\n" + tf
	}
	system = fmt.Sprintf("You are a subagent of type %s working for task %s (%s). Your parent task, for context:\n\n%s",
		agentType, parent.ID, parent.Subject, agent.Truncate(content, 16<<10))
	if sp.SystemPrompt != "" {
		system = sp.SystemPrompt + "\n\n" + system
	}
	return text, system
}

// DelegateLine runs a /delegate prompt line of task t. The child is named
// <type>-<n> for the line's place among the script's /delegate lines of
// that type, so a pass that runs again finds it instead of starting it
// twice; a child a /converge line of the script votes on is marked so
// (answerRequired) from the start. A scope violation fails the child,
// not t.
func (ld Leading) DelegateLine(ctx context.Context, st prompt.Step, c *prompt.Delegate) error {
	j, t, script := ld.Job, ld.Task, ld.Script
	l := j.List
	n := 0
	for _, s := range script.Leading {
		if o, ok := s.Cmd.(*prompt.Delegate); ok && o.AgentType == c.AgentType {
			n++
		}
		if s.Line == st.Line {
			break
		}
	}
	name := fmt.Sprintf("%s-%d", c.AgentType, n)
	if id, err := children.Named(l.Dir, t.ID, name); err == nil {
		_, err = releaseQueued(ctx, l.Dir, id) // a pass cut short between creating and releasing it
		return err
	}
	_, err := Parent{Config: j.Config, Dir: l.Dir, ID: t.ID}.Delegate(ctx, c, DelegateOptions{Name: name, Log: j.Log, AnswerRequired: votedOn(script, name), emit: l.Emit})
	if errors.Is(err, ErrScope) {
		j.Log.Warn("subagent refused", "list", l.ID, "task", t.ID, "line", st.Line, "err", err)
		return nil
	}
	return err
}

// votedOn reports whether a /converge line of script compares the answer
// of the child called name: its strategy is vote or consensus.
func votedOn(script *prompt.Script, name string) bool {
	for _, st := range script.Leading {
		if c, ok := st.Cmd.(*prompt.Converge); ok && comparesAnswers(c.Strategy) && slices.Contains(c.IDs, name) {
			return true
		}
	}
	return false
}

// comparesAnswers reports whether a convergence by strategy decides by the
// children's answers.
func comparesAnswers(strategy string) bool {
	return strategy == strategyVote || strategy == strategyConsensus
}

// CheckScope runs before every attempt of a subagent (a task with
// metadata.taskd.agentType): its permission mode and tools must still lie
// within its parent's (a person may have edited either), else it fails
// with an error wrapping ErrScope and the attempt never starts. It logs
// SubagentActive, and warns about a bypassPermissions grant. A subagent
// that inherits its parent's Claude session (inheritSession) resumes it
// as a new session when its profile is claude's.
func CheckScope(j *job.Job, t *taskfile.Task, sp task.Spec, a *agent.Attempt) error {
	l := j.List
	agentType, ok := t.Metadata.Object("taskd").String("agentType")
	if !ok {
		return nil
	}
	if s, ok := t.Metadata.Object("taskd").String("inheritSession"); ok && s != "" && agent.CanResume(a.Profile) {
		a.Resume, a.Fork = s, true // the parent's conversation, continued as a new session
	}
	if sp.Parent == "" {
		return scopeErrorf("a subagent (agentType %s) needs metadata.taskd.parent", agentType)
	}
	parent, err := l.Dir.Read(sp.Parent)
	if err != nil {
		return scopeErrorf("its parent task %s cannot be read (%v); a subagent runs only within its parent's permissions", sp.Parent, err)
	}
	cs := scopeOf(t)
	if err := checkScope(sp.Parent, scopeOf(parent), cs); err != nil {
		return err
	}
	fields := subagentFields(l.Dir.Path(), t)
	fields["initial_state"] = task.Running
	if cs.Mode == "bypassPermissions" {
		fields["bypass_allowed_by"] = "metadata.taskd.allowBypass of task " + sp.Parent
		j.Log.Warn("subagent runs with bypassPermissions", "list", l.ID, "task", t.ID, "parent", sp.Parent, "allowedBy", "metadata.taskd.allowBypass")
	}
	l.Events.Append(eventlog.Event{Type: eventlog.SubagentActive, List: l.ID, Task: t.ID, Parent: sp.Parent, Attempt: sp.Attempt, Data: fields})
	return nil
}
