package status_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/status"
)

// root writes lists of task files (list → id → content) under a new root
// and returns it.
func root(t *testing.T, lists map[string]map[string]string) string {
	t.Helper()
	r := t.TempDir()
	for l, tasks := range lists {
		dir := filepath.Join(r, l)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for id, data := range tasks {
			if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return r
}

func taskd(subject, status, td string) string {
	return `{"subject":"` + subject + `","status":"` + status + `","owner":"taskd","metadata":{"taskd":` + td + `}}`
}

// TestSnapshot: what taskd status shows of a root, read from the files
// alone: each task's state and what it waits for, the tree, blockers not
// completed, a person's question, files refused by the daemon or unreadable,
// names that are not ids, tasks of others hidden unless asked for.
func TestSnapshot(t *testing.T) {
	r := root(t, map[string]map[string]string{
		"l": {
			"1": taskd(`parent\nmore lines`, "in_progress", `{"state":"waiting","attempt":1,"children":{"parallel":["2","3"]}}`),
			"2": taskd("child a", "completed", `{"state":"succeeded","parent":"1","name":"a","attempt":1}`),
			"3": taskd("child b", "in_progress", `{"state":"running","parent":"1","name":"b","attempt":2}`),
			"4": taskd("blocked", "pending", `{}`),
			"5": taskd("asks", "pending", `{"state":"needs_human","hitl":{"reason":"pick one","options":["yes","no"],"refused":"\"maybe\" is not an answer"}}`),
			"6": `{"subject":"someone else's","status":"pending"}`,
			"7": `{not json`,
			"8": taskd("refused", "pending", `{"agent":"nobody"}`),
		},
	})
	listDir := filepath.Join(r, "l")
	// 4 is blocked by 2 (completed) and 3 (not).
	os.WriteFile(filepath.Join(listDir, "4.json"), []byte(`{"subject":"blocked","status":"pending","owner":"taskd","blockedBy":["2","3"]}`), 0o600)
	// The daemon refused 8, after its file was written.
	note := area.RejectNote(listDir, "8.json")
	os.MkdirAll(filepath.Dir(note), 0o700)
	os.WriteFile(note, []byte(filepath.Join(listDir, "8.json")+": unknown agent \"nobody\"\n\nHow to fix it: Name an agent of the\nconfiguration.\n\nMore words.\n"), 0o600)
	later := time.Now().Add(time.Minute)
	os.Chtimes(note, later, later)
	os.WriteFile(filepath.Join(listDir, "my notes.json"), []byte(`{}`), 0o600) // a name that is no id

	lists, err := status.Snapshot(r, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) != 1 || lists[0].ID != "l" {
		t.Fatalf("lists %+v", lists)
	}
	ls := lists[0]
	byID := map[string]status.Task{}
	var ids []string
	for _, ts := range ls.Tasks {
		byID[ts.ID] = ts
		ids = append(ids, ts.ID)
	}
	if want := []string{"1", "2", "3", "4", "5", "7", "8"}; !slices.Equal(ids, want) || ls.Hidden != 1 {
		t.Errorf("tasks %v (%d hidden), want %v and 1 hidden", ids, ls.Hidden, want)
	}
	p := byID["1"]
	if p.Subject != "parent" || p.State != "waiting" || !slices.Equal(p.Children, []string{"2", "3"}) ||
		p.Waits == nil || p.Waits.Kind != "children" || p.Waits.Total != 2 || !slices.Equal(p.Waits.Open, []string{"3"}) {
		t.Errorf("the parent: %+v, waits %+v", p, p.Waits)
	}
	if c := byID["3"]; c.Parent != "1" || c.Name != "b" || c.Attempt != 2 || !c.Taskd {
		t.Errorf("child b: %+v", c)
	}
	if b := byID["4"]; !slices.Equal(b.BlockedBy, []string{"3"}) {
		t.Errorf("4 is blocked by %v, want the one not completed (3)", b.BlockedBy)
	}
	if a := byID["5"]; a.WaitingFor != `pick one (refused: "maybe" is not an answer)` || !slices.Equal(a.Options, []string{"yes", "no"}) {
		t.Errorf("the question: %q %v", a.WaitingFor, a.Options)
	}
	if bad := byID["7"]; bad.Rejected == "" || bad.Fix == "" {
		t.Errorf("an unreadable file: %+v", bad)
	}
	if ref := byID["8"]; ref.Rejected != `unknown agent "nobody"` || ref.Fix != "Name an agent of the configuration." {
		t.Errorf("the refused task: %q, fix %q", ref.Rejected, ref.Fix)
	}
	if len(ls.Misnamed) != 1 || ls.Misnamed[0].Name != "my notes.json" || ls.Misnamed[0].Fix == "" {
		t.Errorf("misnamed %+v", ls.Misnamed)
	}

	all, err := status.Snapshot(r, []string{"l"}, true)
	if err != nil || len(all[0].Tasks) != 8 || all[0].Hidden != 0 {
		t.Errorf("with all: %d tasks, %d hidden (%v)", len(all[0].Tasks), all[0].Hidden, err)
	}
}

// TestSnapshot_StaleRejection: a note older than its task file is stale
// (the file was edited since): the task is not shown refused.
func TestSnapshot_StaleRejection(t *testing.T) {
	r := root(t, map[string]map[string]string{"l": {"1": taskd("s", "pending", `{}`)}})
	note := area.RejectNote(filepath.Join(r, "l"), "1.json")
	os.MkdirAll(filepath.Dir(note), 0o700)
	os.WriteFile(note, []byte("x: old problem\n"), 0o600)
	earlier := time.Now().Add(-time.Hour)
	os.Chtimes(note, earlier, earlier)
	lists, err := status.Snapshot(r, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := lists[0].Tasks[0].Rejected; got != "" {
		t.Errorf("a stale note shows: %q", got)
	}
}

// TestSnapshot_RefusedList: a list a daemon would not serve says why and
// how to fix it.
func TestSnapshot_RefusedList(t *testing.T) {
	r := root(t, map[string]map[string]string{"open": {"1": taskd("s", "pending", `{}`)}})
	if err := os.Chmod(filepath.Join(r, "open"), 0o777); err != nil {
		t.Fatal(err)
	}
	lists, err := status.Snapshot(r, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lists[0].Refused, "writable by other users") || !strings.Contains(lists[0].Fix, "chmod go-w") {
		t.Errorf("refused %q, fix %q", lists[0].Refused, lists[0].Fix)
	}
	if _, err := status.Snapshot(filepath.Join(r, "missing"), nil, false); err == nil {
		t.Error("a missing root gave no error")
	}
}

// TestSnapshot_Pause: a pending task whose agent's profile is paused shows
// the pause; a task of another agent, a running one or a workflow does
// not.
func TestSnapshot_Pause(t *testing.T) {
	r := root(t, map[string]map[string]string{"l": {
		"1": taskd("held", "pending", `{"agent":"claude"}`),
		"2": taskd("other agent", "pending", `{"agent":"exec"}`),
		"3": taskd("running", "in_progress", `{"agent":"claude","state":"running"}`),
		"4": `{"subject":"wf","status":"pending","owner":"taskd","metadata":{"workflowType":"w","taskd":{"agent":"claude"}}}`,
		"5": taskd("default agent", "pending", `{}`),
	}})
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	err := pausefile.Update(context.Background(), r, time.Now(), func(rec *pausefile.Record) error {
		rec.Profiles = map[string]pausefile.Pause{"claude": {Reason: "usage limit", By: pausefile.ByLimit, Since: time.Now(), Until: until, Agents: []string{"claude"}, Default: true}}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lists, err := status.Snapshot(r, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range lists[0].Tasks {
		held := ts.ID == "1" || ts.ID == "5"
		if (ts.Pause != nil) != held {
			t.Errorf("task %s (%s): pause %+v, want held %v", ts.ID, ts.Subject, ts.Pause, held)
		}
		if held && (ts.Pause.Profile != "claude" || !ts.Pause.Until.Equal(until)) {
			t.Errorf("task %s: pause %+v", ts.ID, ts.Pause)
		}
	}
}
