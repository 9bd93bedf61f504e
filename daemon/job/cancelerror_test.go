package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestCancelError_countsTheChildrenTheCancelReached: a waiting parent's
// error counts the children that had not ended when it was cancelled,
// also those its cancel has ended already, but not those that ended
// before or were cancelled by another task.
func TestCancelError_countsTheChildrenTheCancelReached(t *testing.T) {
	child := func(state, by string) string {
		extra := ""
		if by != "" {
			extra = `, "cancelledBy": "` + by + `"`
		}
		return `{"id": "x", "subject": "c", "description": "", "status": "pending", "blocks": [], "blockedBy": [], "owner": "taskd",
  "metadata": {"taskd": {"prompt": "true", "parent": "1", "state": "` + state + `"` + extra + `}}}`
	}
	for _, tt := range []struct {
		name, kid string
		want      string
	}{
		{"still running", child("running", ""), "cancelled while waiting for 1 child"},
		{"already cancelled by this cancel", child("cancelled", "1"), "cancelled while waiting for 1 child"},
		{"cancelled by another task", child("cancelled", "9"), "cancelled while waiting for the tasks it handed work to"},
		{"ended before", child("succeeded", ""), "cancelled while waiting for the tasks it handed work to"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			parent := `{"id": "1", "subject": "p", "description": "", "status": "in_progress", "blocks": [], "blockedBy": [], "owner": "taskd",
  "metadata": {"taskd": {"prompt": "true", "state": "waiting", "attempt": 1, "children": {"parallel": ["2"]}}}}`
			for name, content := range map[string]string{"1.json": parent, "2.json": strings.Replace(tt.kid, `"x"`, `"2"`, 1)} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			d, err := taskfile.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			p, err := d.Read("1")
			if err != nil {
				t.Fatal(err)
			}
			if got := cancelError(d, p, task.RecordOf(p), task.Waiting, 1); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
