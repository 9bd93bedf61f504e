package workflows_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/navigator/flowtrace"
	"github.com/taskd/taskd/workflows"
)

// TestCatalog validates flow's own workflows (opt-in: TASKD_COMPAT_DIR).
// Every catalog workflow must validate without a single problem, including
// the two that flow's JSON schema rejects for using fork and join. The
// synthetic workflows, written to reach flow's corners, must be reported
// for exactly the corners they contain.
func TestCatalog(t *testing.T) {
	dir := flowtrace.Dir(t)
	files, err := filepath.Glob(filepath.Join(dir, "workflows", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog workflows in %s: %v", dir, err)
	}
	for _, f := range files {
		d, err := workflows.LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range d.Problems {
			t.Errorf("%s", p)
		}
	}
	want := map[string][]string{
		"synthetic-edges.json": {
			`node "start": the start node has 2 outgoing edges; only the first (to "a") is ever followed`,
			`node "b": no way out when the step failed: add an edge with "on": "failed" or an unconditional one`,
			`node "custom": unknown node type "custom-type" (want start, end, task, gate, subflow, fork or join)`,
		},
		"synthetic-fanout.json": {`node "dead_end": no way out: the task has no outgoing edge`},
		"synthetic-stages.json": {`warning: node "doc_guide": subflow nodes do not run their workflow "execute"; the step runs like a task with no agent`},
	}
	for name, want := range want {
		file := filepath.Join(dir, "synthetic", name)
		if _, err := os.Stat(file); err != nil {
			t.Fatal(err)
		}
		d, err := workflows.LoadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range d.Problems {
			got = append(got, strings.TrimPrefix(p.String(), file+": "))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
