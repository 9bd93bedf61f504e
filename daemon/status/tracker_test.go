package status_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/daemon/status"
)

// TestTracker: a Tracker that reads again only the files that changed
// (Update) or came and went (Sync) gives the list Snapshot reads from
// scratch, at each step: tasks added, edited and removed, a parent and
// its child, a blocker that completes, a task not addressed to taskd, a
// file that does not parse, a file whose name is not a task id.
func TestTracker(t *testing.T) {
	root := t.TempDir()
	list := filepath.Join(root, "l")
	os.Mkdir(list, 0o700)
	write := func(id, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(list, id+".json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	task := func(id, status, meta string) string {
		return `{"id": "` + id + `", "subject": "task ` + id + `", "status": "` + status + `", "blocks": [], "blockedBy": [], "owner": "taskd", "metadata": {"taskd": {` + meta + `}}}`
	}
	write("1", task("1", "in_progress", `"state": "running", "attempt": 1`))
	write("2", task("2", "pending", `"parent": "1"`))
	write("3", `{"id": "3", "subject": "not taskd's", "status": "pending", "blocks": [], "blockedBy": []}`)

	tr, err := status.NewTracker(root, "l", false)
	if err != nil {
		t.Fatal(err)
	}
	same := func(step string) {
		t.Helper()
		want, err := status.Snapshot(root, []string{"l"}, false)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(tr.List())
		wantJSON, _ := json.Marshal(want[0])
		if string(got) != string(wantJSON) {
			t.Errorf("%s:\ntracked  %s\nsnapshot %s", step, got, wantJSON)
		}
	}
	same("at the start")

	write("4", `{"id": "4", "subject": "blocked", "status": "pending", "blocks": [], "blockedBy": ["3"], "owner": "taskd"}`)
	tr.Update("4")
	same("a task added")

	write("3", `{"id": "3", "subject": "not taskd's", "status": "completed", "blocks": [], "blockedBy": []}`)
	write("1", task("1", "pending", `"state": "needs_human", "attempt": 1, "hitl": {"reason": "why", "options": ["passed", "leave"]}`))
	tr.Update("3", "1")
	same("a blocker completed, a task needs a person")

	os.Remove(filepath.Join(list, "2.json"))
	write("5", `{"id": "5", "subject": `)
	os.WriteFile(filepath.Join(list, "a b.json"), []byte("{}"), 0o600)
	if err := tr.Sync(); err != nil {
		t.Fatal(err)
	}
	same("a task gone, a bad file and a misnamed one come")

	tr.Update("2", "6", "../x")
	same("updates of files that are not there")
}
