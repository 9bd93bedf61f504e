package retention_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/retention"
	"github.com/taskd/taskd/taskfile"
)

// TestPlanTasks: of a list's ended tasks of taskd's, those older than the
// policy keeps are removed, unless a task that has not ended needs them
// (a blocker, its ancestors, its children, a schedule's last run), or
// the task is a person's; a recent one stays, and an old failed one stays
// while the policy keeps failed tasks for ever.
func TestPlanTasks(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	old, recent := "2026-10-01T00:00:00Z", "2026-11-26T00:00:00Z"
	ended := func(state, at string, extra string) string {
		status := "completed"
		return `{"subject": "s", "status": "` + status + `", "owner": "taskd", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"prompt": "p", "state": "` + state + `", "finishedAt": "` + at + `"` + extra + `}}}`
	}
	pending := func(blockedBy, extra string) string {
		return `{"subject": "s", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [` + blockedBy + `], "metadata": {"taskd": {"prompt": "p"` + extra + `}}}`
	}
	files := map[string]string{
		"1":  ended("succeeded", old, ""),                                 // removed
		"2":  ended("succeeded", recent, ""),                              // recent
		"3":  ended("failed", old, ""),                                    // failed: kept for ever
		"4":  ended("succeeded", old, ""),                                 // a blocker of 5
		"5":  pending(`"4"`, ""),                                          // not ended
		"6":  ended("succeeded", old, ""),                                 // grandparent of 8
		"7":  ended("succeeded", old, `, "parent": "6"`),                  // parent of 8
		"8":  pending("", `, "parent": "7"`),                              // not ended
		"9":  pending("", `, "children": {"done": ["10"], "queued": []}`), // a parent waiting
		"10": ended("succeeded", old, `, "parent": "9"`),                  // its child
		"11": ended("succeeded", old, `, "parent": "12"`),                 // a child of 12
		"12": pending("", ""),                                             // not ended, 11's parent
		"13": pending("", `, "schedule": "0 2 * * *", "recurrence": {"for": "0 2 * * *", "lastRun": "14", "runs": 2}`),
		"14": ended("succeeded", old, `, "parent": "13"`),                                       // the schedule's last run
		"15": ended("succeeded", old, ""),                                                       // an earlier run of 13 (not its child)
		"16": `{"subject": "a person's", "status": "completed", "blocks": [], "blockedBy": []}`, // not taskd's
	}
	list := t.TempDir()
	for id, data := range files {
		if err := os.WriteFile(filepath.Join(list, id+".json"), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := taskfile.Open(list)
	if err != nil {
		t.Fatal(err)
	}
	got, err := retention.PlanTasks(dir, retention.TaskPolicy{Succeeded: 30 * 24 * time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	if want := []string{"1", "15"}; !slices.Equal(ids, want) {
		t.Errorf("removed %v, want %v", ids, want)
	}
	for _, r := range got {
		if r.Why != "succeeded 57 days ago" {
			t.Errorf("%s goes because %q, want %q", r.ID, r.Why, "succeeded 57 days ago")
		}
	}
}
