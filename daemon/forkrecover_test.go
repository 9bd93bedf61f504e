package daemon_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
)

// TestFlow_JoinInterrupted: the daemon died during a join, after it had
// archived the fork's children and before it advanced the parent, which
// was then recorded as interrupted: pending, at the fork, its forkState
// naming the archived children. The next daemon joins those children
// again; it must not make new ones, which would run every branch again.
func TestFlow_JoinInterrupted(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	mark := filepath.Join(t.TempDir(), "branch-ran")
	run := "echo ran >> " + mark
	h.addWorkflow("l", "fan", forkWorkflow("all-pass", run, run, run, run))
	for id, branch := range map[string]string{"2": "a", "3": "b", "4": "c"} {
		h.drop("l", id, `{"id": "`+id+`", "subject": "#1/`+branch+` Fan out", "description": "", "activeForm": "A", "status": "completed", "owner": "taskd", "blocks": [], "blockedBy": [],
  "metadata": {"workflowType": "fan", "currentStep": "join", "userDescription": "Fan out", "parentTaskId": "1", "forkStep": "fork", "branchName": "`+branch+`",
    "taskd": {"parent": "1", "state": "succeeded", "branchResult": "passed", "archived": true, "delivered": true}}}`)
	}
	h.drop("l", "1", `{"id": "1", "subject": "#1 Fan out", "description": "", "activeForm": "Fanning out", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [],
  "metadata": {"userDescription": "Fan out", "workflowType": "fan", "currentStep": "fork", "retryCount": 0,
    "forkState": {"forkStep": "fork", "joinStep": "join", "joinStrategy": "all-pass", "branches": {
      "a": {"status": "running", "childTaskId": "2"}, "b": {"status": "running", "childTaskId": "3"}, "c": {"status": "running", "childTaskId": "4"}}},
    "taskd": {"interrupted": 1}}}`)
	parent := h.waitState("l", "1", task.Succeeded, 30*time.Second)
	ids, err := mustDir(t, h.listDir("l")).List()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ids), 4; got != want {
		t.Errorf("%d task files (%v), want %d: the fork made new children", got, ids, want)
	}
	if _, err := os.Stat(mark); err == nil {
		data, _ := os.ReadFile(mark)
		t.Errorf("branches ran again:\n%s", data)
	}
	if _, ok := parent.Metadata.Get("forkState"); ok {
		t.Errorf("forkState not cleared")
	}
}
