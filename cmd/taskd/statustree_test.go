package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
)

// TestStatus_tree: taskd status LIST/ID shows the task and the tasks
// below it, with their notes (golden), and --json prints that list with
// those tasks alone; a task that does not exist is an error.
func TestStatus_tree(t *testing.T) {
	root := statusRoot(t)
	snap, err := snapshot(root, []string{"children"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if snap, err = subtree(snap, "3"); err != nil {
		t.Fatal(err)
	}
	v := &statusView{root: goldenRoot, home: goldenHome, daemon: daemonState{running: true, pid: 4242}, lists: snap, now: statusNow, width: 80}
	var out bytes.Buffer
	v.render(&out)
	checkGolden(t, filepath.Join("testdata", "status", "tree.golden"), out.Bytes())

	got, errOut, code := runCLI(t, "status", "--root", root, "--json", "children/3")
	if code != 0 {
		t.Fatalf("status --json children/3: exit %d: %s", code, errOut)
	}
	var l status.List
	if err := json.Unmarshal([]byte(got), &l); err != nil {
		t.Fatalf("status --json children/3 is not one list: %v\n%s", err, got)
	}
	var ids []string
	for _, ts := range l.Tasks {
		ids = append(ids, ts.ID)
	}
	if l.ID != "children" || strings.Join(ids, " ") != "3 5 6" {
		t.Errorf("status --json children/3: list %q, tasks %v; want children, 3 5 6", l.ID, ids)
	}
	if l.Tasks[0].Waits == nil || l.Tasks[0].Waits.Total != 2 || len(l.Tasks[0].Waits.Open) != 2 {
		t.Errorf("task 3's waits: %+v, want 2 of 2 open", l.Tasks[0].Waits)
	}
	if got, _, code := runCLI(t, "status", "--root", root, "children/1"); code != 0 || !strings.Contains(got, "└ 4 ") || !strings.Contains(got, "waiting for: 1 of 2 children: second (3)") {
		t.Errorf("status children/1: exit %d\n%s", code, got)
	}
	if _, errOut, code := runCLI(t, "status", "--root", root, "children/9"); code != 1 || !strings.Contains(errOut, "no task children/9") {
		t.Errorf("status children/9: exit %d, %q", code, errOut)
	}
}

// TestStepCell: a workflow's STEP shows its step and the steps run; its
// ATT, the attempts of that step, not the steps.
func TestStepCell(t *testing.T) {
	tests := []struct {
		t    status.Task
		want string
	}{
		{status.Task{Step: "review", Steps: 2, State: "running"}, "review 2/…"},
		{status.Task{Step: "end_success", Steps: 2, State: "succeeded"}, "end_success 2/2"},
		{status.Task{Step: "a_very_long_step_name", Steps: 12, State: "running"}, "a_very_lon… 12/…"},
		{status.Task{Step: "fork_checks"}, "fork_checks"},
		{status.Task{}, ""},
	}
	for _, tt := range tests {
		if got := stepCell(&tt.t); got != tt.want {
			t.Errorf("stepCell(%+v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

// TestStatus_workflowAttempts: a clean two-step workflow, run by a real
// daemon, shows ATT 1 and STEP "<last step> 2/2", not two attempts.
func TestStatus_workflowAttempts(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	startTestDaemon(t, root, &config.FileConfig{})
	mustCLI(t, "submit", "--root", root, "--list", "l", "--workflow", "demo", "--subject", "Walk the demo")
	waitUntil(t, "the workflow to succeed", 30*time.Second, func() bool { return stateIn(t, root, "l", "1") == task.Succeeded })
	var l status.List
	if err := json.Unmarshal([]byte(mustCLI(t, "status", "--root", root, "--json", "l/1")), &l); err != nil {
		t.Fatal(err)
	}
	if got := l.Tasks[0]; got.Attempt != 1 || got.Steps != 2 {
		t.Errorf("the demo workflow: attempt %d, steps %d; want 1 and 2", got.Attempt, got.Steps)
	}
	out := mustCLI(t, "status", "--root", root, "l/1")
	if !strings.Contains(out, " 2/2 ") || !regexp.MustCompile(`2/2 +1 `).MatchString(out) {
		t.Errorf("status l/1: want STEP …2/2 and ATT 1:\n%s", out)
	}
}
