package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// TestDelegate_PermissionScope delegates under every parent permission mode
// (none, plan, default, acceptEdits, bypassPermissions) every child mode
// /delegate accepts, with and without allowBypass, and narrows tools: a
// narrower or equal scope runs; a wider one fails the child with
// SubagentError before any process starts, and the parent goes on.
func TestDelegate_PermissionScope(t *testing.T) {
	t.Parallel()
	type row struct {
		name        string
		parentMode  string
		allowBypass bool
		parentTools []string
		agentType   string
		flags       string
		wantMode    string
		wantTools   []string
		wantErr     string
	}
	rank := map[string]int{"": 1, "plan": 0, "default": 1, "acceptEdits": 2, "bypassPermissions": 3}
	var rows []row
	for _, pm := range []string{"", "plan", "default", "acceptEdits", "bypassPermissions"} {
		for _, cm := range []string{"plan", "acceptEdits", "bypassPermissions"} {
			r := row{name: fmt.Sprintf("parent %q child %s", pm, cm), parentMode: pm, agentType: "analyzer",
				flags: "--permission-mode " + cm, wantMode: cm}
			switch {
			case rank[cm] > rank[pm]:
				r.wantErr = "is wider than the parent's"
			case cm == "bypassPermissions":
				r.wantErr = "bypassPermissions needs metadata.taskd.allowBypass: true"
			}
			rows = append(rows, r)
		}
	}
	rows = append(rows,
		row{name: "bypass with the human flag", parentMode: "bypassPermissions", allowBypass: true, agentType: "builder",
			flags: "--permission-mode bypassPermissions", wantMode: "bypassPermissions"},
		row{name: "the flag does not widen", parentMode: "acceptEdits", allowBypass: true, agentType: "builder",
			flags: "--permission-mode bypassPermissions", wantErr: "is wider than the parent's"},
		row{name: "builder under no mode", agentType: "builder", wantMode: "default"},
		row{name: "builder under plan", parentMode: "plan", agentType: "builder", wantMode: "plan"},
		row{name: "builder under bypass", parentMode: "bypassPermissions", agentType: "builder", wantMode: "acceptEdits"},
		row{name: "tester under acceptEdits", parentMode: "acceptEdits", agentType: "tester", wantMode: "plan"},
		row{name: "type tools narrowed", parentTools: []string{"Read", "Grep"}, agentType: "analyzer",
			wantMode: "plan", wantTools: []string{"Read", "Grep"}},
		row{name: "narrowed forms", parentTools: []string{"Read", "Bash(git:*)"}, agentType: "tester",
			wantMode: "plan", wantTools: []string{"Bash(git:*)", "Read"}},
		row{name: "explicit tools within", parentTools: []string{"Read", "Bash"}, agentType: "analyzer",
			flags: `--tools "Read,Bash(go test:*)"`, wantMode: "plan", wantTools: []string{"Read", "Bash(go test:*)"}},
		row{name: "explicit tool outside", parentTools: []string{"Read", "Grep"}, agentType: "analyzer",
			flags: "--tools Read,Bash", wantErr: "tool Bash is not among the parent's tools"},
		row{name: "no type tool allowed", parentTools: []string{"WebFetch"}, agentType: "analyzer",
			wantErr: "the parent allows none of the analyzer tools"},
		row{name: "unrestricted parent", agentType: "retriever", flags: "--tools Edit", wantMode: "plan", wantTools: []string{"Edit"}},
	)

	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	for i, r := range rows {
		extra := map[string]any{}
		if r.parentMode != "" {
			extra["permissionMode"] = r.parentMode
		}
		if r.allowBypass {
			extra["allowBypass"] = true
		}
		if r.parentTools != nil {
			extra["tools"] = r.parentTools
		}
		marker := fmt.Sprintf("ran-%d", i)
		prompt := "/delegate " + q("touch "+marker) + " --agent-type " + r.agentType + " " + r.flags + "\n\n" +
			`[ -n "$TASKD_RESULTS" ] || echo parent`
		h.drop("l", fmt.Sprintf("p%02d", i), parentTask(prompt, cwd, extra))
	}
	for i, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			h := h.in(t)
			pid := fmt.Sprintf("p%02d", i)
			h.waitState("l", pid, task.Succeeded, 30*time.Second)
			id := h.childNamed("l", pid, r.agentType+"-1")
			c := h.waitEnded("l", id, 30*time.Second)
			_, ranErr := os.Stat(filepath.Join(cwd, fmt.Sprintf("ran-%d", i)))
			evs := h.events("l")
			if r.wantErr != "" {
				if got := stateOf(c); got != task.Failed {
					t.Fatalf("child state = %q, want failed", got)
				}
				if e := tdString(c, "error"); !strings.Contains(e, r.wantErr) || !strings.Contains(e, "permission scope") {
					t.Errorf("child error = %q, want it to say %q", e, r.wantErr)
				}
				checkSequence(t, evs, []wantEvent{{eventlog.SubagentError, id, map[string]any{"error_kind": "permission", "error": tdString(c, "error")}}})
				if n := countEvents(evs, eventlog.TaskStarted, id) + countEvents(evs, eventlog.SubagentSpawned, id); n != 0 {
					t.Errorf("the refused child has %d TaskStarted/SubagentSpawned events", n)
				}
				if _, err := os.Stat(filepath.Join(h.listDir("l"), ".taskd", "runs", id)); err == nil || ranErr == nil {
					t.Errorf("the refused child ran")
				}
				return
			}
			if got := stateOf(c); got != task.Succeeded || ranErr != nil {
				t.Fatalf("child state = %q (%s), want succeeded", got, tdString(c, "error"))
			}
			if got := tdString(c, "permissionMode"); got != r.wantMode {
				t.Errorf("child permissionMode = %q, want %q", got, r.wantMode)
			}
			if r.wantTools != nil {
				if got, _ := c.Metadata.Object("taskd").Get("tools"); !equalJSON(got, r.wantTools) {
					t.Errorf("child tools = %s, want %v", mustJSON(got), r.wantTools)
				}
			}
			fields := map[string]any{"permission_mode": r.wantMode}
			if r.wantMode == "bypassPermissions" {
				fields["bypass_allowed_by"] = "metadata.taskd.allowBypass of task " + pid
			}
			checkSequence(t, evs, []wantEvent{{eventlog.SubagentSpawned, id, fields}, {eventlog.SubagentActive, id, fields}})
		})
	}
	if !strings.Contains(h.logs.String(), "subagent granted bypassPermissions") || !strings.Contains(h.logs.String(), "subagent runs with bypassPermissions") {
		t.Errorf("the bypass grant was not logged:\n%s", h.logs)
	}
}

// TestDelegate_ScopeCheckedBeforeEachRun: a subagent whose file was
// widened by hand is refused before its process starts.
func TestDelegate_ScopeCheckedBeforeEachRun(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	h.drop("l", "p", parentTask("echo parent", cwd, map[string]any{"permissionMode": "plan"}))
	h.waitState("l", "p", task.Succeeded, 10*time.Second)
	child, _ := json.Marshal(map[string]any{"subject": "widened", "owner": "taskd", "metadata": map[string]any{"taskd": map[string]any{
		"agent": "analyzer", "prompt": "touch ran", "cwd": cwd, "parent": "p", "agentType": "analyzer",
		"permissionMode": "acceptEdits", "tools": []string{"Read"}}}})
	h.drop("l", "c", string(child))
	c := h.waitState("l", "c", task.Failed, 10*time.Second)
	if e := tdString(c, "error"); !strings.Contains(e, "permission scope: permissionMode acceptEdits is wider than the parent's plan") {
		t.Errorf("error = %q", e)
	}
	if _, err := os.Stat(filepath.Join(cwd, "ran")); err == nil {
		t.Errorf("the widened subagent ran")
	}
	evs := h.waitEvents("l", eventlog.SubagentError, "c", 1)
	checkSequence(t, evs, []wantEvent{
		{eventlog.TaskStarted, "c", nil},
		{eventlog.TaskFailed, "c", nil},
		{eventlog.SubagentError, "c", map[string]any{"error_kind": "permission", "permission_mode": "acceptEdits", "agent_type": "analyzer"}},
	})
	if n := countEvents(evs, eventlog.SubagentActive, "c"); n != 0 {
		t.Errorf("SubagentActive logged for a refused subagent")
	}
}

// TestDelegate_AgentTypesConfig: the configuration's agentTypes override
// a type's default tools and mode; mistakes in it are refused with the
// field named.
func TestDelegate_AgentTypesConfig(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ config, wantErr string }{
		{`{"agentTypes": {"reviewer": {"permissionMode": "plan"}}}`, `agentTypes: "reviewer" is not an agent type (known: builder, tester, analyzer, retriever)`},
		{`{"agentTypes": {"tester": {"permissionMode": "sudo"}}}`, `agentTypes.tester.permissionMode is "sudo", want one of plan, default, acceptEdits, bypassPermissions`},
		{`{"agentTypes": {"tester": {"tools": []}}}`, `agentTypes.tester.tools is empty`},
		{`{"agentTypes": {"tester": {"tools": ["Read,Bash"]}}}`, `agentTypes.tester.tools has "Read,Bash"`},
		{`{"agentTypes": {"tester": {"tool": ["Read"]}}}`, `unknown field "tool"`},
	} {
		path := filepath.Join(t.TempDir(), "config.json")
		os.WriteFile(path, []byte(tt.config), 0o644)
		if _, err := config.LoadFileConfig(path, false); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error %v, want %q", tt.config, err, tt.wantErr)
		}
	}

	h := startSubagents(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.AgentTypes = map[string]config.AgentTypeSpec{"tester": {Tools: []string{"Bash(go test:*)", "Read"}, PermissionMode: "acceptEdits"}}
	})
	cwd := t.TempDir()
	h.drop("l", "1", parentTask("/delegate "+q("echo ok")+" --agent-type tester\n/delegate "+q("echo ok")+" --agent-type analyzer\n\n"+
		`[ -n "$TASKD_RESULTS" ] || echo parent`, cwd, map[string]any{"permissionMode": "acceptEdits"}))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	for name, want := range map[string]struct {
		mode  string
		tools []string
	}{"tester-1": {"acceptEdits", []string{"Bash(go test:*)", "Read"}}, "analyzer-1": {"plan", []string{"Read", "Grep", "Glob"}}} {
		c := h.read("l", h.childNamed("l", "1", name))
		got, _ := c.Metadata.Object("taskd").Get("tools")
		if tdString(c, "permissionMode") != want.mode || !equalJSON(got, want.tools) {
			t.Errorf("%s: mode %q tools %s, want %q %v", name, tdString(c, "permissionMode"), mustJSON(got), want.mode, want.tools)
		}
	}
}
