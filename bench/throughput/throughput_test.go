package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/bench/taskdrun"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestDrop: a producer's task file, renamed into the list whole, is one
// taskd takes: addressed to it, the exec agent running true.
func TestDrop(t *testing.T) {
	list := t.TempDir()
	for i := 1; i <= 3; i++ {
		if err := drop(list, i); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(list)
	if len(entries) != 3 {
		t.Fatalf("the list holds %d files, want 3 (no drop file left)", len(entries))
	}
	tf, err := taskfile.ReadFile(filepath.Join(list, "2.json"))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := task.ReadSpec(tf)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := task.Addressed(tf); !ok || tf.ID != "2" || sp.Agent != "exec" || task.Prompt(tf, sp) != "true" {
		t.Errorf("task 2: addressed %v, id %q, agent %q, prompt %q", ok, tf.ID, sp.Agent, task.Prompt(tf, sp))
	}
}

// TestCountSucceeded: the succeeded tasks of the event log taskd writes.
func TestCountSucceeded(t *testing.T) {
	list := t.TempDir()
	if taskdrun.Succeeded(list) != 0 {
		t.Fatal("counted a missing log")
	}
	log := eventlog.New(list)
	defer log.Close()
	for _, typ := range []string{eventlog.TaskSucceeded, eventlog.TaskFailed, eventlog.TaskSucceeded, eventlog.TaskStarted} {
		if err := log.Append(eventlog.Event{Type: typ, List: "bench", Task: "1"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := taskdrun.Succeeded(list); got != 2 {
		t.Errorf("countSucceeded = %d, want 2", got)
	}
}
