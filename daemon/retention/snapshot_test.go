package retention_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/retention"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestPlanSince_StartedAgainSinceTheSnapshot: the daemon's pass plans
// from what its loop knew of each task (TaskInfo) and checks only the
// task it removes, under its lock (StillExpired). A task the snapshot
// knew as ended, started again since (taskd retry, or a person's edit
// back to pending), needs its blocker again; a task made since needs
// its blocker too. Neither's blocker goes (PlanKnown alone removed it,
// and a blockedBy naming no task blocks for ever); an ended task that
// nothing needs still goes.
func TestPlanSince_StartedAgainSinceTheSnapshot(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	p := retention.TaskPolicy{Succeeded: 7 * day, Failed: 30 * day}
	at := func(age time.Duration) string { return now.Add(-age).Format(time.RFC3339) }
	ended := func(state string, age time.Duration, blockedBy string) string {
		return `{"subject": "s", "status": "completed", "owner": "taskd", "blocks": [], "blockedBy": [` + blockedBy + `], "metadata": {"taskd": {"prompt": "p", "state": "` + state + `", "finishedAt": "` + at(age) + `"}}}`
	}
	pending := func(blockedBy string) string {
		return `{"subject": "s", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [` + blockedBy + `], "metadata": {"taskd": {"prompt": "p"}}}`
	}
	for _, tt := range []struct {
		name   string
		before map[string]string // the files as the snapshot knew them
		after  map[string]string // written since
	}{
		{"started again", map[string]string{"y": ended("succeeded", 8*day, ""), "x": ended("failed", day, `"y"`), "z": ended("succeeded", 9*day, "")}, map[string]string{"x": pending(`"y"`)}},
		{"made since", map[string]string{"y": ended("succeeded", 8*day, ""), "z": ended("succeeded", 9*day, "")}, map[string]string{"n": pending(`"y"`)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			list := t.TempDir()
			dir, err := taskfile.Open(list)
			if err != nil {
				t.Fatal(err)
			}
			var snapshot []retention.TaskInfo
			for _, id := range []string{"x", "y", "z"} {
				data, ok := tt.before[id]
				if !ok {
					continue
				}
				if err := os.WriteFile(filepath.Join(list, id+".json"), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
				tf, err := dir.Read(id)
				if err != nil {
					t.Fatal(err)
				}
				snapshot = append(snapshot, retention.InfoOf(tf))
			}
			for _, k := range snapshot {
				if !k.Known || !k.Ended || k.ID != "x" && k.State != task.Succeeded {
					t.Fatalf("the snapshot knows %s as %+v", k.ID, k)
				}
			}
			// Taken now: the kernel's clock, which stamps the files, may
			// be a tick behind.
			since := time.Now().Add(-20 * time.Millisecond)
			for id, data := range tt.after {
				if err := os.WriteFile(filepath.Join(list, id+".json"), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			rs, err := retention.PlanSince(dir, p, now, snapshot, since)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				dir.Remove(context.Background(), r.ID, func(t *taskfile.Task, _ error) error {
					return retention.StillExpired(dir, p, now)(t)
				})
			}
			if _, err := os.Lstat(filepath.Join(list, "y.json")); err != nil {
				t.Errorf("the blocker of a task that has not ended now is gone: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(list, "z.json")); err == nil {
				t.Errorf("an ended task nothing needs is kept (planned: %v)", rs)
			}
		})
	}
}
