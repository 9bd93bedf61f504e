package daemon_test

import (
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
)

// TestFlow_NeedsHumanSinceItAsked: a workflow whose steps ran a while
// before its gate escalated to a person waits for that person since it
// asked — what taskd status's AGE and show's "needs_human … ago" say —
// not since the workflow started.
func TestFlow_NeedsHumanSinceItAsked(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	wait, release := gate(t)
	h.addWorkflow("l", "slow-gate", `{"id": "slow-gate", "name": "slow gate", "nodes": {
  "start": {"type": "start"},
  "build": {"type": "task", "name": "Build", "command": "`+wait+`"},
  "test": {"type": "gate", "name": "Test", "maxRetries": 0, "command": "false"},
  "end": {"type": "end", "result": "success"},
  "hitl": {"type": "end", "result": "blocked", "escalation": "hitl", "name": "Tests fail"}},
 "edges": [
  {"from": "start", "to": "build"}, {"from": "build", "to": "test"},
  {"from": "test", "to": "end", "on": "passed"}, {"from": "test", "to": "hitl", "on": "failed"},
  {"from": "hitl", "to": "build", "on": "passed"}]}`)
	h.drop("l", "1", flowTask("1", "slow-gate", "Build and test", ""))
	h.waitEvents("l", eventlog.StepStarted, "1", 1)
	began := time.Now()
	h.waitFor("the build step to have run a while", 10*time.Second, func() bool { return time.Since(began) > 1500*time.Millisecond })
	release()
	h.waitState("l", "1", task.NeedsHuman, 20*time.Second)

	var asked time.Time
	for _, e := range h.waitEvents("l", eventlog.TaskNeedsHuman, "1", 1) {
		if e.Type == eventlog.TaskNeedsHuman && e.Task == "1" {
			asked = e.TS
		}
	}
	lists, err := status.Snapshot(h.root, []string{"l"}, false)
	if err != nil || len(lists) != 1 || len(lists[0].Tasks) != 1 {
		t.Fatalf("snapshot: %v %+v", err, lists)
	}
	// The file is written before its event is logged.
	if since := lists[0].Tasks[0].Since; since.Before(asked.Add(-time.Second)) || since.After(asked) {
		t.Errorf("needs_human since %s, want the moment it asked (%s), not the workflow's start", since, asked)
	}
}
