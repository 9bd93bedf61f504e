package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"

	"github.com/taskd/taskd/bench/taskdrun"
)

// TestTaskJSON: the task files the benchmark drops are taskd's, as taskd
// reads them: addressed to it, an exec agent running the script, blocked
// by what extra names.
func TestTaskJSON(t *testing.T) {
	list := t.TempDir()
	if err := taskdrun.Drop(list, "7", taskJSON("7", "echo 'hi there'", `"3", "4"`)); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(list)
	if len(entries) != 1 || entries[0].Name() != "7.json" {
		t.Fatalf("the list holds %v, want 7.json alone (the drop file renamed)", entries)
	}
	tf, err := taskfile.ReadFile(filepath.Join(list, "7.json"))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := task.ReadSpec(tf)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := task.Addressed(tf); !ok || sp.Agent != "exec" || task.Prompt(tf, sp) != "echo 'hi there'" || strings.Join(tf.BlockedBy, ",") != "3,4" {
		t.Errorf("the dropped task: addressed %v, agent %q, prompt %q, blockedBy %v", ok, sp.Agent, task.Prompt(tf, sp), tf.BlockedBy)
	}
}

// TestEventCounter: the succeeded tasks counted from the event log as
// taskd writes it, reading only what was appended, a line cut in the
// middle counted once it is whole.
func TestEventCounter(t *testing.T) {
	list := t.TempDir()
	log := eventlog.New(list)
	defer log.Close()
	path := filepath.Join(list, ".taskd", "events.jsonl")
	c := &eventCounter{path: path}
	if c.count() != 0 {
		t.Fatal("counted events of a missing log")
	}
	for i, typ := range []string{eventlog.TaskStarted, eventlog.TaskSucceeded, eventlog.TaskFailed, eventlog.TaskSucceeded} {
		if err := log.Append(eventlog.Event{Type: typ, List: "l", Task: string(rune('1' + i))}); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.count(); got != 2 || taskdrun.Succeeded(list) != 2 {
		t.Errorf("count = %d, succeeded = %d; want 2", got, taskdrun.Succeeded(list))
	}
	// Half a line: not counted until it is whole.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(`{"ts":"2026-01-01T00:00:00Z","type":"TaskSuc`)
	if got := c.count(); got != 2 {
		t.Errorf("count with half a line = %d, want 2", got)
	}
	f.WriteString(`ceeded","list":"l","task":"9"}` + "\n")
	if got := c.count(); got != 3 {
		t.Errorf("count once the line is whole = %d, want 3", got)
	}
}

// TestStatusField: a field of /proc/<pid>/status, in its unit.
func TestStatusField(t *testing.T) {
	data := []byte("Name:\ttaskd\nVmRSS:\t   12345 kB\nThreads:\t7\n")
	if got := statusField(data, "VmRSS"); got != 12345 {
		t.Errorf("VmRSS = %d", got)
	}
	if got := statusField(data, "VmSwap"); got != 0 {
		t.Errorf("a missing field = %d", got)
	}
	if self, err := os.ReadFile("/proc/self/status"); err == nil && statusField(self, "VmRSS") <= 0 {
		t.Error("this process's VmRSS is not positive")
	}
	if format(1234.5) != "1234" && format(1234.5) != "1235" || format(0.5) != "0.50" || format(0) != "0" {
		t.Errorf("format: %s %s %s", format(1234.5), format(0.5), format(0))
	}
}
