package retention_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/taskd/taskd/daemon/retention"
	"github.com/taskd/taskd/taskfile"
)

// TestKnown: Plan's view of a list's tasks from what is known of them:
// known, as known, its file not read; not known, as its file says; not
// told of, there and not ended while its file is, gone when it is not.
func TestKnown(t *testing.T) {
	list := t.TempDir()
	files := map[string]string{
		"ended":     "not read", // known: a read would find no task
		"running":   "not read",
		"unknown":   `{"subject": "s", "status": "completed", "owner": "taskd", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"prompt": "p", "state": "succeeded"}}}`,
		"bad":       "not a task", // not known, and unreadable: kept
		"appeared":  `{"subject": "s", "status": "completed", "owner": "taskd", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"prompt": "p", "state": "succeeded"}}}`,
		"persons":   "not read",
		"knownGone": "", // no file: known to have ended, is gone since
	}
	for id, data := range files {
		if data == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(list, id+".json"), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := taskfile.Open(list)
	if err != nil {
		t.Fatal(err)
	}
	// Not in id order: Known sorts a copy.
	task := retention.Known(dir, []retention.TaskInfo{
		{ID: "running", Known: true, Owned: true},
		{ID: "ended", Known: true, Owned: true, Ended: true},
		{ID: "unknown"},
		{ID: "bad"},
		{ID: "persons", Known: true, Ended: true},
		{ID: "knownGone", Known: true, Owned: true, Ended: true},
	})
	tests := []struct {
		id   string
		want retention.Task
	}{
		{"ended", retention.Task{Exists: true, Ended: true}},
		{"running", retention.Task{Exists: true}},
		{"unknown", retention.Task{Exists: true, Ended: true}},
		{"bad", retention.Task{Exists: true}},
		{"appeared", retention.Task{Exists: true}},
		{"persons", retention.Task{Exists: true, Ended: true}},
		{"knownGone", retention.Task{Exists: true, Ended: true}},
		{"never", retention.Task{}},
		{"not an id", retention.Task{Exists: true}},
	}
	for _, tt := range tests {
		if got := task(tt.id); got != tt.want {
			t.Errorf("task(%q) = %+v, want %+v", tt.id, got, tt.want)
		}
	}
}

// TestConfirm: of Plan's removals, those of a task that has not ended
// when asked again are dropped; each task is asked once; a path that is
// not a task's stays.
func TestConfirm(t *testing.T) {
	rs := []retention.Removal{
		{Path: ".taskd/runs/a/1"},
		{Path: ".taskd/runs/a/2"},
		{Path: ".taskd/runs/b"},
		{Path: ".taskd/inbox/b"},
		{Path: ".taskd/inbox/c"},
		{Path: ".taskd/runs/d/1"},
		{Path: ".taskd/locks/x"},
	}
	now := map[string]retention.Task{
		"a": {Exists: true, Ended: true},
		"b": {},             // gone
		"c": {Exists: true}, // started again
		"d": {Exists: true}, // started again
	}
	asked := map[string]int{}
	got := retention.Confirm(rs, func(id string) retention.Task {
		asked[id]++
		return now[id]
	})
	var paths []string
	for _, r := range got {
		paths = append(paths, r.Path)
	}
	if want := []string{".taskd/runs/a/1", ".taskd/runs/a/2", ".taskd/runs/b", ".taskd/inbox/b", ".taskd/locks/x"}; !slices.Equal(paths, want) {
		t.Errorf("confirmed %v, want %v", paths, want)
	}
	for id, n := range asked {
		if n != 1 {
			t.Errorf("task %s asked %d times, want once", id, n)
		}
	}
}
