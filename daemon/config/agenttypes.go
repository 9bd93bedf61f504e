package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/task"
)

// Agent types are the roles a delegated child (a subagent, /delegate) is
// given: a default tool set and a default permission mode, after the subagent commands'
// table. Which profile runs a type is the configuration's "agents" mapping
// (an unmapped type runs the defaultAgent); the configuration's
// "agentTypes" section overrides the defaults:
//
//	{"agents": {"builder": "claude", "tester": "fast"},
//	 "agentTypes": {"tester": {"tools": ["Bash", "Read", "Grep"], "permissionMode": "acceptEdits"}}}

// AgentTypeSpec is one entry of the configuration's "agentTypes": what a
// subagent of that type may do unless its /delegate line says otherwise.
// Fields left out keep the built-in value.
type AgentTypeSpec struct {
	Tools          []string `json:"tools,omitempty"`          // the type's default tool set (--allowedTools)
	PermissionMode string   `json:"permissionMode,omitempty"` // plan, default, acceptEdits or bypassPermissions
}

// AgentType is an agent type as the daemon uses it.
type AgentType struct {
	Name           string
	Tools          []string
	PermissionMode string
}

// agentTypeNames are the agent types /delegate accepts, in the order
// messages list them.
var agentTypeNames = []string{"builder", "tester", "analyzer", "retriever"}

// builtinAgentTypes are the subagent types, in Claude Code's tool names.
var builtinAgentTypes = map[string]AgentTypeSpec{
	// Code generation, file modifications, builds.
	"builder": {Tools: []string{"Read", "Edit", "Write", "Bash", "Glob", "Grep"}, PermissionMode: "acceptEdits"},
	// Test runs and coverage; read-only.
	"tester": {Tools: []string{"Bash", "Read", "Glob", "Grep"}, PermissionMode: "plan"},
	// Code and trajectory analysis; read-only.
	"analyzer": {Tools: []string{"Read", "Grep", "Glob"}, PermissionMode: "plan"},
	// Documentation lookup and web fetches; read-only with network tools.
	"retriever": {Tools: []string{"WebFetch", "WebSearch", "Read"}, PermissionMode: "plan"},
}

// IsAgentType reports whether name is one of the agent types.
func IsAgentType(name string) bool { return slices.Contains(agentTypeNames, name) }

// validateAgentTypes checks the configuration's "agentTypes" section.
func validateAgentTypes(types map[string]AgentTypeSpec) error {
	for _, name := range slices.Sorted(maps.Keys(types)) {
		s := types[name]
		if !IsAgentType(name) {
			return fmt.Errorf("agentTypes: %q is not an agent type (known: %s)", name, strings.Join(agentTypeNames, ", "))
		}
		if s.Tools != nil && len(s.Tools) == 0 {
			return fmt.Errorf("agentTypes.%s.tools is empty; name at least one tool, or leave it out for the built-in set", name)
		}
		for _, t := range s.Tools {
			if strings.TrimSpace(t) == "" || strings.Contains(t, ",") {
				return fmt.Errorf("agentTypes.%s.tools has %q; write one tool name per entry, such as \"Read\"", name, t)
			}
		}
		if s.PermissionMode != "" {
			if _, ok := task.ModeRank[s.PermissionMode]; !ok {
				return fmt.Errorf("agentTypes.%s.permissionMode is %q, want one of %s", name, s.PermissionMode, strings.Join(task.PermissionModes, ", "))
			}
		}
	}
	return nil
}

// compileAgentTypes merges the built-in agent types with the file's.
func compileAgentTypes(file map[string]AgentTypeSpec) map[string]*AgentType {
	out := map[string]*AgentType{}
	specs := maps.Clone(builtinAgentTypes)
	for name, s := range file {
		b := specs[name]
		if s.Tools != nil {
			b.Tools = s.Tools
		}
		if s.PermissionMode != "" {
			b.PermissionMode = s.PermissionMode
		}
		specs[name] = b
	}
	for name, s := range specs {
		out[name] = &AgentType{Name: name, Tools: slices.Clone(s.Tools), PermissionMode: s.PermissionMode}
	}
	return out
}

// LookupAgentType returns agent type name; the built-in table if the
// configuration was built without one.
func (c *Config) LookupAgentType(name string) (*AgentType, error) {
	if !IsAgentType(name) {
		return nil, fmt.Errorf("%q is not an agent type (known: %s)", name, strings.Join(agentTypeNames, ", "))
	}
	types := c.AgentTypes
	if types == nil {
		types = compileAgentTypes(nil)
	}
	return types[name], nil
}
