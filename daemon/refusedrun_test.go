package daemon_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/task"
)

// TestRefused_WhileItRuns: a person edits the file of a task whose agent
// (a real process: sleep) runs into one taskd rejects (a field of the
// wrong type), or into one no longer addressed to taskd (another owner,
// metadata.taskd gone). The rejection is where the user looks (the note in
// .taskd/rejected, saying the agent runs on and how to stop it), and a
// cancel stops the agent whichever way it comes: in the same edit, in a
// later edit by hand, or by taskd cancel. (The loop stopped looking at a
// rejected file before it looked at its cancel: the agent ran on,
// unseen, whatever the person did.)
func TestRefused_WhileItRuns(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		how       string
		takenAway bool // the edit takes the task from taskd, else it breaks a field
	}{
		{how: "in the same edit"},
		{how: "in a later edit"},
		{how: "by taskd cancel"},
		{how: "in a later edit", takenAway: true},
		{how: "by taskd cancel", takenAway: true},
	} {
		how, name := tt.how, tt.how
		if tt.takenAway {
			name = "taken from taskd, cancelled " + how
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := startDaemon(t, []string{"l"})
			pidFile := filepath.Join(t.TempDir(), "pid")
			h.drop("l", "1", execTask("edited while it runs", "echo $$ > "+pidFile+".new && mv "+pidFile+".new "+pidFile+"; exec sleep 600"))
			h.waitState("l", "1", task.Running, 20*time.Second)
			h.waitFor("the agent to run", 20*time.Second, func() bool { return agentRuns(pidFile) })

			file := filepath.Join(h.listDir("l"), "1.json")
			problem := "metadata.taskd.retries"
			if tt.takenAway {
				problem = "no longer addresses taskd"
				editFile(t, file, func(tf map[string]any) {
					tf["owner"] = "someone"
					delete(tf["metadata"].(map[string]any), "taskd")
				})
			} else {
				editTask(t, file, func(td map[string]any) {
					td["retries"] = "three" // a count: rejected
					if how == "in the same edit" {
						td["cancel"] = true
					}
				})
			}
			note := filepath.Join(h.listDir("l"), ".taskd", "rejected", "1.json.txt")
			h.waitFor("the rejection's note", 20*time.Second, func() bool { return fileExists(note) })
			text, _ := os.ReadFile(note)
			for _, want := range []string{problem, "the task's agent runs on", "taskd cancel"} {
				if !strings.Contains(string(text), want) {
					t.Errorf("the rejection's note does not say %q:\n%s", want, text)
				}
			}
			switch how {
			case "in a later edit":
				if !agentRuns(pidFile) {
					t.Fatal("the agent was stopped by an edit that did not cancel it")
				}
				editFile(t, file, func(tf map[string]any) {
					md := tf["metadata"].(map[string]any)
					if md["taskd"] == nil {
						md["taskd"] = map[string]any{}
					}
					md["taskd"].(map[string]any)["cancel"] = true
				})
			case "by taskd cancel":
				if !agentRuns(pidFile) {
					t.Fatal("the agent was stopped by an edit that did not cancel it")
				}
				if _, err := control.CancelTask(context.Background(), mustOpen(t, h.listDir("l")), "1"); err != nil {
					t.Fatalf("taskd cancel of the rejected running task: %v", err)
				}
			}
			h.waitFor("the agent to be stopped", 30*time.Second, func() bool { return !agentRuns(pidFile) })
			h.waitState("l", "1", task.Cancelled, 30*time.Second)
			h.waitFor("the rejection's note to go once the task ended", 20*time.Second, func() bool { return !fileExists(note) || !tt.takenAway })
		})
	}
}

// editTask changes metadata.taskd of the task file at path as a person
// does: an edited copy moved into place.
func editTask(t *testing.T, path string, edit func(td map[string]any)) {
	t.Helper()
	editFile(t, path, func(tf map[string]any) { edit(tf["metadata"].(map[string]any)["taskd"].(map[string]any)) })
}

// editFile changes the task file at path as a person does: an edited
// copy moved into place.
func editFile(t *testing.T, path string, edit func(tf map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tf map[string]any
	if err := json.Unmarshal(data, &tf); err != nil {
		t.Fatal(err)
	}
	edit(tf)
	if data, err = json.MarshalIndent(tf, "", "  "); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".edit"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
