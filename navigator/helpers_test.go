package navigator_test

import (
	"testing"

	"github.com/taskd/taskd/navigator"
)

// The test workflows are small graphs written for these tests, each
// exercising a few rules. ship is the main one:
//
//	start → analyze_request ─passed→ planned (a stage boundary) ─passed→ implement → run_tests
//	run_tests ─passed→ fork_checks {docs: write_docs, review: review_code ⇄ address_review} → join_checks
//	run_tests ─failed→ implement (retry, maxRetries 2) | stuck (HITL, resumes at implement)
//	join_checks ─passed→ publish ─passed→ done; ─failed→ stuck
var testWorkflows = map[string]string{
	"ship": `{
  "id": "ship",
  "name": "Ship a change",
  "nodes": {
    "start": {"type": "start"},
    "analyze_request": {"type": "task", "name": "Analyze the request", "agent": "Planner", "stage": "planning",
      "description": "Read ./notes/brief.md first.", "context_files": ["docs/spec.md", "./notes/brief.md"]},
    "planned": {"type": "end", "result": "success", "name": "Planning done"},
    "implement": {"type": "task", "name": "Implement", "agent": "Developer", "stage": "development"},
    "run_tests": {"type": "gate", "name": "Run tests", "agent": "Tester", "stage": "verification", "maxRetries": 2},
    "stuck": {"type": "end", "result": "blocked", "escalation": "hitl", "name": "Stuck"},
    "fork_checks": {"type": "fork", "name": "Checks", "join": "join_checks", "branches": {
      "docs": {"entryStep": "write_docs", "description": "Update the docs"},
      "review": {"entryStep": "review_code"}}},
    "write_docs": {"type": "task", "name": "Write docs", "agent": "Writer", "stage": "delivery"},
    "review_code": {"type": "gate", "name": "Review", "agent": "Reviewer", "maxRetries": 1},
    "address_review": {"type": "task", "name": "Address review", "agent": "Developer"},
    "join_checks": {"type": "join", "name": "Checks done", "fork": "fork_checks", "strategy": "any-pass"},
    "publish": {"type": "task", "name": "Publish", "instructions": "Follow ./RELEASING.md."},
    "done": {"type": "end", "result": "success", "escalation": "alert"},
    "abandoned": {"type": "end", "result": "cancelled"}
  },
  "edges": [
    {"from": "start", "to": "analyze_request"},
    {"from": "analyze_request", "to": "planned", "on": "passed"},
    {"from": "analyze_request", "to": "abandoned", "on": "failed"},
    {"from": "planned", "to": "implement", "on": "passed"},
    {"from": "implement", "to": "run_tests"},
    {"from": "run_tests", "to": "fork_checks", "on": "passed"},
    {"from": "run_tests", "to": "implement", "on": "failed"},
    {"from": "run_tests", "to": "stuck", "on": "failed"},
    {"from": "stuck", "to": "implement", "on": "passed"},
    {"from": "fork_checks", "to": "write_docs"},
    {"from": "fork_checks", "to": "review_code"},
    {"from": "write_docs", "to": "join_checks"},
    {"from": "review_code", "to": "join_checks", "on": "passed"},
    {"from": "review_code", "to": "address_review", "on": "failed"},
    {"from": "review_code", "to": "stuck", "on": "failed"},
    {"from": "address_review", "to": "review_code"},
    {"from": "join_checks", "to": "publish", "on": "passed"},
    {"from": "join_checks", "to": "stuck", "on": "failed"},
    {"from": "publish", "to": "done", "on": "passed"},
    {"from": "publish", "to": "abandoned", "on": "failed"}
  ]
}`,
	// edges: edge selection corner cases.
	"edges": `{
  "nodes": {
    "9": {"type": "task", "name": "Nine"},
    "start": {"type": "start"},
    "10": {"type": "start"},
    "a": {"type": "task", "name": "Alpha"},
    "b": {"type": "task", "name": "Bravo"},
    "c": {"type": "gate", "name": "Charlie", "maxRetries": 0},
    "h": {"type": "end", "result": "blocked", "escalation": "hitl", "maxRetries": 1},
    "f": {"type": "end", "result": "failure"},
    "loop": {"type": "task", "name": "Loop", "maxRetries": 3}
  },
  "edges": [
    {"from": "10", "to": "a"},
    {"from": "start", "to": "b"},
    {"from": "a", "to": "b"},
    {"from": "a", "to": "c", "on": "passed"},
    {"from": "a", "to": "9", "on": "passed"},
    {"from": "b", "to": "c"},
    {"from": "c", "to": "a", "on": "failed"},
    {"from": "c", "to": "h", "on": "failed"},
    {"from": "c", "to": "loop", "on": "passed"},
    {"from": "h", "to": "a", "on": "failed"},
    {"from": "h", "to": "f", "on": "failed"},
    {"from": "h", "to": "b", "on": "passed"},
    {"from": "9", "to": "f", "on": "failed"},
    {"from": "loop", "to": "loop", "on": "failed"},
    {"from": "loop", "to": "f", "on": "passed"}
  ]
}`,
	// stages: stage boundaries, one of them leading into a fork.
	"stages": `{
  "nodes": {
    "start": {"type": "start"},
    "one": {"type": "task", "name": "One", "agent": "Developer"},
    "one_done": {"type": "end", "result": "success"},
    "two": {"type": "task", "name": "Two"},
    "two_done": {"type": "end", "result": "success"},
    "fork": {"type": "fork", "join": "join", "branches": {"x": {"entryStep": "x"}, "y": {"entryStep": "ghost"}}},
    "x": {"type": "task", "name": "X"},
    "join": {"type": "join", "fork": "fork"},
    "three_done": {"type": "end", "result": "success"},
    "after": {"type": "task", "name": "After"}
  },
  "edges": [
    {"from": "start", "to": "one"},
    {"from": "one", "to": "one_done", "on": "passed"},
    {"from": "one_done", "to": "two", "on": "passed"},
    {"from": "two", "to": "two_done", "on": "passed"},
    {"from": "two_done", "to": "fork", "on": "passed"},
    {"from": "x", "to": "join"},
    {"from": "join", "to": "three_done", "on": "passed"},
    {"from": "three_done", "to": "after"}
  ]
}`,
	"no-edges":  `{"nodes": {"start": {"type": "start"}, "a": {"type": "task"}}}`,
	"no-nodes":  `{"edges": []}`,
	"no-start":  `{"nodes": {"a": {"type": "task"}}, "edges": []}`,
	"start-out": `{"nodes": {"start": {"type": "start"}}, "edges": []}`,
	"dangling":  `{"nodes": {"start": {"type": "start"}, "a": {"type": "task"}, "fork": {"type": "fork", "join": "nope", "branches": {}}}, "edges": [{"from": "start", "to": "ghost"}, {"from": "a", "to": "ghost"}]}`,
}

// testCatalog is a Catalog of the test workflows; root is the source root
// of all of them.
type testCatalog struct {
	wfs  map[string]*navigator.Workflow
	root string
}

func (c testCatalog) Lookup(id string) (*navigator.Workflow, string, bool) {
	wf, ok := c.wfs[id]
	return wf, c.root, ok
}

func mustCatalog(t testing.TB) testCatalog {
	t.Helper()
	c := testCatalog{wfs: map[string]*navigator.Workflow{}}
	for id, src := range testWorkflows {
		wf, err := navigator.Parse([]byte(src))
		if err != nil {
			t.Fatalf("parse %s: %v", id, err)
		}
		c.wfs[id] = wf
	}
	return c
}

// task builds a task file's state: stem "7", id "7" and the metadata given
// as key, value pairs.
func task(kv ...any) *navigator.Task {
	md := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		md[kv[i].(string)] = kv[i+1]
	}
	return &navigator.Task{Stem: "7", ID: "7", HasID: true, Metadata: md}
}

// at is the metadata of a task of workflow wf at step with a retry count.
func at(wf, step string, retryCount any, more ...any) *navigator.Task {
	return task(append([]any{"workflowType", wf, "currentStep", step, "retryCount", retryCount}, more...)...)
}

func ptr[T any](v T) *T { return &v }
