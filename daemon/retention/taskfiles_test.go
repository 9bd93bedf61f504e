package retention_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/retention"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestPlanTasks: of a list's ended tasks of taskd's, those older than the
// policy keeps are removed, unless a task that has not ended needs them
// (a blocker, its ancestors, its children, a schedule's last run), or
// the task is a person's; a recent one stays, and an old failed one stays
// while the policy keeps failed tasks for ever. The same whether every
// file is read (PlanTasks) or the ended tasks are known and their files
// are not read (PlanKnown: they hold what no read could take for a task).
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
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	succeeded := func(id, endedAt, parent string) retention.TaskInfo {
		return retention.TaskInfo{ID: id, Known: true, Owned: true, Ended: true, State: task.Succeeded, EndedAt: at(endedAt), Parent: parent}
	}
	// What the daemon knows of the ended tasks, as their files say.
	known := []retention.TaskInfo{
		succeeded("1", old, ""),
		succeeded("2", recent, ""),
		{ID: "3", Known: true, Owned: true, Ended: true, State: task.Failed, EndedAt: at(old)},
		succeeded("4", old, ""),
		succeeded("6", old, ""),
		succeeded("7", old, "6"),
		succeeded("10", old, "9"),
		succeeded("11", old, "12"),
		succeeded("14", old, "13"),
		succeeded("15", old, ""),
		{ID: "16", Known: true, Ended: true},
	}
	tests := []struct {
		name string
		plan func(dir *taskfile.Dir, list string) ([]retention.TaskRemoval, error)
	}{
		{"every file read", func(dir *taskfile.Dir, _ string) ([]retention.TaskRemoval, error) {
			return retention.PlanTasks(dir, retention.TaskPolicy{Succeeded: 30 * 24 * time.Hour}, now)
		}},
		{"ended tasks known", func(dir *taskfile.Dir, list string) ([]retention.TaskRemoval, error) {
			tasks := slices.Clone(known)
			for _, k := range known {
				// Not a task file any read would accept.
				if err := os.WriteFile(filepath.Join(list, k.ID+".json"), []byte("not read"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for id := range files {
				if !slices.ContainsFunc(known, func(k retention.TaskInfo) bool { return k.ID == id }) {
					tasks = append(tasks, retention.TaskInfo{ID: id}) // not known: read
				}
			}
			return retention.PlanKnown(dir, retention.TaskPolicy{Succeeded: 30 * 24 * time.Hour}, now, tasks)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
			got, err := tt.plan(dir, list)
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
		})
	}
}

// TestPlanKnown: what PlanKnown does with the tasks it is told of: a task
// known to have ended goes without its file being read, at the time it is
// known to have ended or, not known, its file's; a task not known is read,
// and one that cannot be read plans nothing; a file it is not told of is
// neither read nor removed.
func TestPlanKnown(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	p := retention.TaskPolicy{Succeeded: 7 * day, Failed: 30 * day}
	done := func(id string, age time.Duration) retention.TaskInfo {
		return retention.TaskInfo{ID: id, Known: true, Owned: true, Ended: true, State: task.Succeeded, EndedAt: now.Add(-age)}
	}
	endedFile := `{"subject": "s", "status": "completed", "owner": "taskd", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"prompt": "p", "state": "succeeded", "finishedAt": "2026-01-01T00:00:00Z"}}}`
	tests := []struct {
		name  string
		files map[string]string // the list's task files; "" is a file no read accepts
		mtime time.Duration     // how old the files are
		tasks []retention.TaskInfo
		want  []retention.TaskRemoval
		bad   bool // PlanKnown fails
	}{
		{
			name:  "known to have ended: not read",
			files: map[string]string{"a": "", "b": ""},
			tasks: []retention.TaskInfo{done("b", 8*day), done("a", 6*day)},
			want:  []retention.TaskRemoval{{ID: "b", Why: "succeeded 8 days ago"}},
		},
		{
			name:  "failed, kept longer",
			files: map[string]string{"f": ""},
			tasks: []retention.TaskInfo{{ID: "f", Known: true, Owned: true, Ended: true, State: task.TimedOut, EndedAt: now.Add(-31 * day)}},
			want:  []retention.TaskRemoval{{ID: "f", Why: "ended (timed_out) 31 days ago"}},
		},
		{
			name:  "no end time known: the file's",
			files: map[string]string{"m": ""},
			mtime: 9 * day,
			tasks: []retention.TaskInfo{{ID: "m", Known: true, Owned: true, Ended: true, State: task.Succeeded}},
			want:  []retention.TaskRemoval{{ID: "m", Why: "succeeded 9 days ago"}},
		},
		{
			name:  "not taskd's: kept",
			files: map[string]string{"p": ""},
			tasks: []retention.TaskInfo{{ID: "p", Known: true, Ended: true, EndedAt: now.Add(-90 * day)}},
		},
		{
			name:  "not known: read",
			files: map[string]string{"r": endedFile},
			tasks: []retention.TaskInfo{{ID: "r"}},
			want:  []retention.TaskRemoval{{ID: "r", Why: "succeeded 330 days ago"}},
		},
		{
			name:  "not known, unreadable: nothing planned",
			files: map[string]string{"r": "", "b": ""},
			tasks: []retention.TaskInfo{{ID: "r"}, done("b", 8*day)},
			bad:   true,
		},
		{
			name:  "a file not told of: not read, not removed",
			files: map[string]string{"new": "", "b": ""},
			tasks: []retention.TaskInfo{done("b", 8*day)},
			want:  []retention.TaskRemoval{{ID: "b", Why: "succeeded 8 days ago"}},
		},
		{
			name:  "known not to have ended: read for what it needs",
			files: map[string]string{"w": `{"subject": "s", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": ["b"], "metadata": {"taskd": {"prompt": "p"}}}`, "b": "", "c": ""},
			tasks: []retention.TaskInfo{{ID: "w", Known: true, Owned: true}, done("b", 8*day), done("c", 8*day)},
			want:  []retention.TaskRemoval{{ID: "c", Why: "succeeded 8 days ago"}},
		},
		{
			name:  "the ancestors of a task that has not ended, through a person's",
			files: map[string]string{"w": `{"subject": "s", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"prompt": "p", "parent": "q"}}}`, "q": "", "g": ""},
			tasks: []retention.TaskInfo{{ID: "w", Known: true, Owned: true}, {ID: "q", Known: true, Ended: true, Parent: "g"}, done("g", 8*day)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := t.TempDir()
			for id, data := range tt.files {
				if data == "" {
					data = "not a task"
				}
				path := filepath.Join(list, id+".json")
				if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
				at := now.Add(-tt.mtime)
				os.Chtimes(path, at, at)
			}
			dir, err := taskfile.Open(list)
			if err != nil {
				t.Fatal(err)
			}
			got, err := retention.PlanKnown(dir, p, now, tt.tasks)
			if (err != nil) != tt.bad {
				t.Fatalf("err = %v, want an error: %v", err, tt.bad)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
