package status

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadOutcome: how far a task has got, for every kind of end, a task
// that needs a person, one that runs, one that is not taskd's, a file the
// daemon refused and one that is gone.
func TestReadOutcome(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"ok":      `{"id": "ok", "subject": "x", "owner": "taskd", "status": "completed", "metadata": {"taskd": {"state": "succeeded", "result": {"success": true, "summary": "all green", "costUsd": 0.25}}}}`,
		"failed":  `{"id": "failed", "subject": "x", "owner": "taskd", "status": "pending", "metadata": {"taskd": {"state": "failed", "error": "  tests fail\nat line 3"}}}`,
		"human":   `{"id": "human", "subject": "x", "owner": "taskd", "status": "pending", "metadata": {"taskd": {"state": "needs_human", "hitl": {"reason": "r", "options": ["passed"]}}}}`,
		"running": `{"id": "running", "subject": "x", "owner": "taskd", "status": "in_progress", "metadata": {"taskd": {"state": "running"}}}`,
		"theirs":  `{"id": "theirs", "subject": "x", "status": "completed"}`,
		"todo":    `{"id": "todo", "subject": "x", "status": "pending"}`,
		"refused": `{"id": "refused", "subject": "x", "owner": "taskd"}`,
		"torn":    `{"id": "torn", "subj`,
	}
	for id, data := range files {
		if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, ".taskd", "rejected"), 0o700)
	os.WriteFile(filepath.Join(dir, ".taskd", "rejected", "refused.json.txt"), []byte(filepath.Join(dir, "refused.json")+": workflow \"x\" is unknown\nfix: …\n"), 0o600)
	cost := 0.25
	for _, tt := range []struct {
		id   string
		want Outcome
	}{
		{"ok", Outcome{Ended: true, OK: true, State: "succeeded", Summary: "all green", CostUSD: &cost}},
		{"failed", Outcome{Ended: true, State: "failed", Error: "  tests fail\nat line 3"}},
		{"human", Outcome{State: "needs_human", NeedsHuman: true}},
		{"running", Outcome{State: "running"}},
		{"theirs", Outcome{Ended: true, OK: true, State: "completed"}},
		{"todo", Outcome{Ended: true, State: "not_taskd"}},
		{"refused", Outcome{Ended: true, State: "rejected", Error: "workflow \"x\" is unknown"}},
		{"torn", Outcome{}},
		{"gone", Outcome{Ended: true, State: "missing"}},
	} {
		if got := ReadOutcome(dir, tt.id); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.id, got, tt.want)
		}
	}
}
