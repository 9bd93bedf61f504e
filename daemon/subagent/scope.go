package subagent

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Permission scoping of subagents: a delegated child may have a narrower
// permission mode and tool set than its parent, never a wider one.
//
// Modes order from narrowest to widest:
//
//	plan < default < acceptEdits < bypassPermissions
//
// (default is Claude Code's own mode when none is given: it may use the
// tools it is allowed but must ask before edits, which in a headless run
// means it may not edit.) A task's effective mode is its
// metadata.taskd.permissionMode; a task without one runs in Claude Code's
// default mode, so that is its effective mode. Its tools are
// metadata.taskd.tools; none means unrestricted. bypassPermissions is
// granted to a child only when the parent runs with it itself and a person
// has set metadata.taskd.allowBypass: true on the parent; taskd never writes
// that flag (a delegated child gets allowBypass: false).

// ErrScope is wrapped by every permission-scoping failure.
var ErrScope = errors.New("permission scope")

// A scope is what a task may do: its permission mode and tools (nil:
// unrestricted) and the tools it may never use.
type scope struct {
	Mode        string
	Tools       []string
	Disallowed  []string
	AllowBypass bool // a person allowed bypassPermissions for this task's children
}

// scopeOf reads a task's effective scope.
func scopeOf(t *taskfile.Task) scope {
	m := t.Metadata.Object("taskd")
	s := scope{Tools: task.Strings(m, "tools"), Disallowed: task.Strings(m, "disallowedTools")}
	s.Mode, _ = m.String("permissionMode")
	if s.Mode == "" {
		s.Mode = task.DefaultMode
	}
	if _, set := m.Get("tools"); set && s.Tools == nil {
		s.Tools = []string{} // an explicit empty list allows no tool
	}
	s.AllowBypass, _ = m.Bool("allowBypass")
	return s
}

// scopeErrorf returns a scoping error for the child of parent.
func scopeErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrScope, fmt.Sprintf(format, args...))
}

// childScope decides the scope of a new subagent of agent type at under
// a parent with scope p: an explicit mode or tool list (from the /delegate
// line) must lie within the parent's; without one the type's default is
// used, narrowed to the parent's. It fails with an error wrapping ErrScope
// that says what was asked, what the parent allows and how to allow it.
func childScope(parentID string, p scope, at *config.AgentType, mode string, tools []string) (scope, error) {
	c := scope{Disallowed: p.Disallowed}
	if _, ok := task.ModeRank[p.Mode]; !ok {
		return c, scopeErrorf("task %s has permissionMode %q, which is not one of %s", parentID, p.Mode, strings.Join(task.PermissionModes, ", "))
	}
	if mode != "" {
		if _, ok := task.ModeRank[mode]; !ok {
			return c, scopeErrorf("permission mode %q is not one of %s", mode, strings.Join(task.PermissionModes, ", "))
		}
		if task.ModeRank[mode] > task.ModeRank[p.Mode] {
			return c, scopeErrorf("--permission-mode %s is wider than the parent's %s; a subagent may only narrow it (set metadata.taskd.permissionMode on task %s to allow more)", mode, p.Mode, parentID)
		}
		c.Mode = mode
	} else {
		c.Mode = at.PermissionMode
		if task.ModeRank[c.Mode] > task.ModeRank[p.Mode] {
			c.Mode = p.Mode
		}
		if c.Mode == "bypassPermissions" && !p.AllowBypass {
			c.Mode = "acceptEdits" // never granted implicitly
		}
	}
	if c.Mode == "bypassPermissions" && !p.AllowBypass {
		return c, scopeErrorf("bypassPermissions needs metadata.taskd.allowBypass: true on task %s, set by a person", parentID)
	}
	if tools != nil {
		for _, t := range tools {
			if !covered(p.Tools, t) {
				return c, scopeErrorf("tool %s is not among the parent's tools (%s); a subagent may only narrow them", t, strings.Join(p.Tools, ", "))
			}
		}
		c.Tools = slices.Clone(tools)
	} else {
		c.Tools = narrowTools(p.Tools, at.Tools)
		if len(c.Tools) == 0 {
			return c, scopeErrorf("the parent allows none of the %s tools (%s); name tools it allows with --tools", at.Name, strings.Join(at.Tools, ", "))
		}
	}
	return c, nil
}

// checkScope verifies that a child's recorded scope still lies within its
// parent's: the run-time check before a subagent's attempt.
func checkScope(parentID string, p, c scope) error {
	if _, ok := task.ModeRank[c.Mode]; !ok {
		return scopeErrorf("permissionMode %q is not one of %s", c.Mode, strings.Join(task.PermissionModes, ", "))
	}
	if _, ok := task.ModeRank[p.Mode]; !ok {
		return scopeErrorf("task %s has permissionMode %q, which is not one of %s", parentID, p.Mode, strings.Join(task.PermissionModes, ", "))
	}
	if task.ModeRank[c.Mode] > task.ModeRank[p.Mode] {
		return scopeErrorf("permissionMode %s is wider than the parent's %s", c.Mode, p.Mode)
	}
	if c.Mode == "bypassPermissions" && !p.AllowBypass {
		return scopeErrorf("bypassPermissions needs metadata.taskd.allowBypass: true on task %s, set by a person", parentID)
	}
	if c.Tools == nil && p.Tools != nil {
		return scopeErrorf("the subagent has no tool list but task %s is restricted to %s", parentID, strings.Join(p.Tools, ", "))
	}
	for _, t := range c.Tools {
		if !covered(p.Tools, t) {
			return scopeErrorf("tool %s is not among the parent's tools (%s)", t, strings.Join(p.Tools, ", "))
		}
	}
	for _, t := range p.Disallowed {
		if !slices.Contains(c.Disallowed, t) {
			return scopeErrorf("the parent disallows %s but the subagent does not", t)
		}
	}
	return nil
}

// covered reports whether a tool list allows tool t: nil allows every
// tool; an entry allows itself, and a bare name ("Bash") also allows its
// narrowed forms ("Bash(git:*)").
func covered(list []string, t string) bool {
	if list == nil {
		return true
	}
	for _, p := range list {
		if p == t || !strings.Contains(p, "(") && toolBase(t) == p {
			return true
		}
	}
	return false
}

// narrowTools is the part of an agent type's tools the parent allows: each
// tool the parent allows as it is, or else the parent's narrowed forms of
// it (the type's Bash under a parent with Bash(git:*) is Bash(git:*)).
func narrowTools(parent, want []string) []string {
	if parent == nil {
		return slices.Clone(want)
	}
	var out []string
	for _, t := range want {
		if covered(parent, t) {
			out = append(out, t)
			continue
		}
		for _, p := range parent {
			if toolBase(p) == t && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func toolBase(t string) string {
	if i := strings.IndexByte(t, '('); i >= 0 {
		return t[:i]
	}
	return t
}
