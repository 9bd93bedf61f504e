package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/workflows"
)

// TestCopyAndList: CopyWorkflows writes taskd's workflows into the
// project (as JSON.stringify(…, null, 2) writes them) with READMEs it
// keeps once a person changed them; ListWorkflows then lists the project's
// by default and everything with source "all"; unknown ids and a call
// without ids are answered as flow answers them.
func TestCopyAndList(t *testing.T) {
	e := newEnv(t, envOpts{})
	dir := filepath.Join(e.project, ".flow", "workflows")
	got := e.callJSON("CopyWorkflows", map[string]any{"workflowIds": []string{"bug-fix", "nope", "../bug-fix"}})
	wantErrors := `[{"error":"not found in catalog","id":"nope"},{"error":"not found in catalog","id":"../bug-fix"}]`
	if errs, _ := json.Marshal(got["errors"]); got["schemaVersion"] != 2.0 || !equalJSON(got["copied"], []any{"bug-fix"}) || string(errs) != wantErrors || got["path"] != dir {
		t.Errorf("CopyWorkflows = %v", got)
	}
	data, err := os.ReadFile(filepath.Join(dir, "bug-fix", "workflow.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "{\n  \"id\": \"bug-fix\",\n") || strings.HasSuffix(string(data), "\n") {
		t.Errorf("workflow.json is not laid out as JSON.stringify(…, null, 2):\n%.200s", data)
	}
	readme := filepath.Join(e.project, ".flow", "README.md")
	write(t, readme, "mine")
	e.callJSON("CopyWorkflows", map[string]any{"workflowIds": []string{"quick-task"}})
	if data, _ := os.ReadFile(readme); string(data) != "mine" {
		t.Errorf("a README a person wrote was replaced: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Errorf("no README in .flow/workflows: %v", err)
	}

	list := e.callJSON("ListWorkflows", nil)
	if list["filter"] != "project" || list["hasProjectWorkflows"] != true || list["hint"] == nil {
		t.Errorf("ListWorkflows = %v", list)
	}
	if ids := idsOf(list["workflows"]); !slices.Equal(ids, []string{"bug-fix", "quick-task"}) {
		t.Errorf("project workflows %v", ids)
	}
	all := e.callJSON("ListWorkflows", map[string]any{"source": "all"})
	if all["hint"] != nil || len(idsOf(all["workflows"])) != len(workflows.Builtin()) {
		t.Errorf("all: %v", idsOf(all["workflows"]))
	}
	for _, w := range all["workflows"].([]any) {
		w := w.(map[string]any)
		if want := map[bool]string{true: "project", false: "catalog"}[w["id"] == "bug-fix" || w["id"] == "quick-task"]; w["source"] != want {
			t.Errorf("%v: source %v, want %s", w["id"], w["source"], want)
		}
	}
	if catalog := e.callJSON("ListWorkflows", map[string]any{"source": "catalog"}); slices.Contains(idsOf(catalog["workflows"]), "bug-fix") {
		t.Errorf("the project's bug-fix is listed as the catalog's")
	}

	for tool, msg := range map[string]string{
		"CopyWorkflows": "workflowIds is required. Use ListCatalog to see available workflows, then pass specific IDs.",
		"CopyAgents":    "agentIds is required. Use ListCatalog to see available agents, then pass specific IDs.",
	} {
		if got := e.callJSON(tool, map[string]any{}); got["error"] != msg || got["tool"] != tool {
			t.Errorf("%s without ids = %v", tool, got)
		}
	}
}

// TestCopyAgentsAndCatalog: ListCatalog offers taskd's workflows and the
// templates of the agents they name, with options for AskUserQuestion;
// CopyAgents writes the templates into .claude/agents (or targetDir,
// relative to the project).
func TestCopyAgentsAndCatalog(t *testing.T) {
	e := newEnv(t, envOpts{})
	cat := e.callJSON("ListCatalog", nil)
	agents := idsOf(cat["agents"])
	if cat["schemaVersion"] != 3.0 || len(idsOf(cat["workflows"])) != len(workflows.Builtin()) || len(agents) == 0 {
		t.Fatalf("ListCatalog = %v", cat)
	}
	if n := len(cat["workflowSelectionOptions"].([]any)); n != len(workflows.Builtin())+1 {
		t.Errorf("%d workflow options", n)
	}
	names := map[string]bool{}
	for _, a := range workflows.Agents() {
		names[a.Name] = true
	}
	for _, d := range workflows.Builtin() {
		for _, id := range d.Workflow.Nodes() {
			if a := d.Workflow.Node(id).Agent; a != "" && !names[a] {
				t.Errorf("workflow %s names agent %s, which has no template", d.ID, a)
			}
		}
	}
	got := e.callJSON("CopyAgents", map[string]any{"agentIds": []string{"developer", "ghost"}})
	dir := filepath.Join(e.project, ".claude", "agents")
	if !equalJSON(got["copied"], []any{"developer"}) || got["path"] != dir || got["schemaVersion"] != 3.0 || got["errors"] == nil {
		t.Errorf("CopyAgents = %v", got)
	}
	data, err := os.ReadFile(filepath.Join(dir, "developer.md"))
	if err != nil || workflows.Frontmatter(string(data))["name"] != "Developer" {
		t.Errorf("developer.md: %v\n%s", err, data)
	}
	got = e.callJSON("CopyAgents", map[string]any{"agentIds": []string{"tester"}, "targetDir": "agents"})
	if got["path"] != filepath.Join(e.project, "agents") {
		t.Errorf("targetDir: %v", got)
	}
}

// TestSelectWorkflow: every workflow, and questions of two to four
// options (AskUserQuestion's bounds), the project's workflows first.
func TestSelectWorkflow(t *testing.T) {
	e := newEnv(t, envOpts{})
	write(t, filepath.Join(e.project, ".flow", "workflows", "ctx.json"), ctxWorkflow)
	got := e.callJSON("SelectWorkflow", nil)
	dialog, _ := got["dialog"].([]any)
	if len(dialog) == 0 || len(idsOf(got["workflows"])) != len(workflows.Builtin())+1 {
		t.Fatalf("SelectWorkflow = %v", got)
	}
	for i, q := range dialog {
		q := q.(map[string]any)
		opts := q["options"].([]any)
		if len(opts) < 2 || len(opts) > 4 || q["question"] == "" || len(q["header"].(string)) > 12 || q["multiSelect"] != false {
			t.Errorf("question %d: %v", i, q)
		}
	}
	first := dialog[0].(map[string]any)["options"].([]any)[0].(map[string]any)
	if first["label"] != "Context" || !strings.HasSuffix(first["description"].(string), "(5 steps)") {
		t.Errorf("first option %v, want the project's workflow", first)
	}
}

// TestDiagram: the diagram is written where asked (default
// .flow/diagrams/<id>.md) with the current step highlighted; an unknown
// workflow is flow's error.
func TestDiagram(t *testing.T) {
	e := newEnv(t, envOpts{})
	got := e.callJSON("Diagram", map[string]any{"workflowType": "quick-task", "currentStep": "verify"})
	want := filepath.Join(e.project, ".flow", "diagrams", "quick-task.md")
	if got["savedTo"] != want || got["source"] != "catalog" {
		t.Errorf("Diagram = %v", got)
	}
	data, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"```mermaid\nflowchart TD\n", "class n2 current", "| **verify** (current) |"} {
		if !strings.Contains(string(data), s) {
			t.Errorf("the diagram lacks %q:\n%s", s, data)
		}
	}
	got = e.callJSON("Diagram", map[string]any{"workflowType": "quick-task", "filePath": "docs/qt.md"})
	if _, err := os.Stat(filepath.Join(e.project, "docs", "qt.md")); err != nil || got["savedTo"] != "docs/qt.md" {
		t.Errorf("Diagram to docs/qt.md = %v (%v)", got, err)
	}
	for args, msg := range map[string]string{`{"workflowType": "nope"}`: "Workflow 'nope' not found", `{}`: "Workflow 'undefined' not found"} {
		var a map[string]any
		json.Unmarshal([]byte(args), &a)
		if got := e.callJSON("Diagram", a); got["error"] != msg {
			t.Errorf("Diagram %s = %v", args, got)
		}
	}
}

// TestLoadWorkflows: without a path, the project's workflows are listed,
// and those named checked; with a path, a plugin's workflows are loaded
// for the session, Navigate walks them with their source root, and
// loading again replaces them.
func TestLoadWorkflows(t *testing.T) {
	e := newEnv(t, envOpts{opts: Options{}})
	got := e.callJSON("LoadWorkflows", nil)
	if got["hint"] == nil || !equalJSON(got["available"], []any{}) || got["source"] != "project" {
		t.Errorf("without .flow: %v", got)
	}
	dir := filepath.Join(e.project, ".flow", "workflows")
	write(t, filepath.Join(dir, "ctx.json"), ctxWorkflow)
	write(t, filepath.Join(dir, "broken", "workflow.json"), `{"nodes": {"start": {"type": "start"}}, "edges": [{"from": "start", "to": "nowhere"}]}`)
	write(t, filepath.Join(dir, "notjson.json"), `{`)
	got = e.callJSON("LoadWorkflows", nil)
	if !equalJSON(got["available"], []any{"broken", "ctx", "notjson"}) || !equalJSON(got["loaded"], []any{}) || got["hint"] == nil {
		t.Errorf("listing: %v", got)
	}
	got = e.callJSON("LoadWorkflows", map[string]any{"workflowIds": []string{"ctx", "broken", "notjson", "ghost"}})
	errs, _ := got["errors"].([]any)
	if !equalJSON(got["loaded"], []any{"ctx"}) || len(errs) != 3 {
		t.Fatalf("loading: %v", got)
	}
	for i, want := range []string{"invalid schema: ", "", "not found in .flow/workflows/"} {
		msg := errs[i].(map[string]any)["error"].(string)
		if !strings.HasPrefix(msg, want) || msg == "" {
			t.Errorf("error %d = %q, want %q…", i, msg, want)
		}
	}

	plugin := filepath.Join(e.project, "plugin")
	write(t, filepath.Join(plugin, ".flow", "workflows", "ext.json"), strings.Replace(ctxWorkflow, `"name": "Context"`, `"name": "External"`, 1))
	got = e.callJSON("LoadWorkflows", map[string]any{"path": plugin})
	if !equalJSON(got["loaded"], []any{"ext"}) || got["source"] != "external" || got["sourceRoot"] != plugin || got["path"] != filepath.Join(plugin, ".flow", "workflows") {
		t.Errorf("external: %v", got)
	}
	nav := e.callJSON("Navigate", map[string]any{"workflowType": "ext"})
	if nav["sourceRoot"] != plugin {
		t.Errorf("Navigate on a loaded workflow: sourceRoot %v", nav["sourceRoot"])
	}
	flat := filepath.Join(plugin, "flat")
	write(t, filepath.Join(flat, "ext.json"), ctxWorkflow)
	got = e.callJSON("LoadWorkflows", map[string]any{"path": flat, "sourceRoot": e.project})
	if got["path"] != flat || got["sourceRoot"] != e.project {
		t.Errorf("with sourceRoot: %v", got)
	}
	list := e.callJSON("ListWorkflows", map[string]any{"source": "external"})
	if ws := list["workflows"].([]any); len(ws) != 1 || ws[0].(map[string]any)["name"] != "Context" {
		t.Errorf("loading again does not replace: %v", ws)
	}
}

func idsOf(v any) []string {
	var out []string
	for _, w := range v.([]any) {
		out = append(out, w.(map[string]any)["id"].(string))
	}
	return out
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestListWorkflows_Fallbacks: a workflow without a name is listed by its
// id and without a description by "", as flow's store lists it; stepCount
// counts every node.
func TestListWorkflows_Fallbacks(t *testing.T) {
	e := newEnv(t, envOpts{})
	write(t, filepath.Join(e.project, ".flow", "workflows", "bare.json"), `{"nodes": {"start": {"type": "start"}, "work": {"type": "task", "name": "W"}, "end": {"type": "end", "result": "success"}},
 "edges": [{"from": "start", "to": "work"}, {"from": "work", "to": "end"}]}`)
	got := e.callJSON("ListWorkflows", nil)
	want := `[{"description":"","id":"bare","name":"bare","source":"project","stepCount":3}]`
	if w, _ := json.Marshal(got["workflows"]); string(w) != want {
		t.Errorf("workflows %s, want %s", w, want)
	}
}
