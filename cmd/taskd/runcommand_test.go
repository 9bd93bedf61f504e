package main

import "testing"

// Ensure "taskd run" is the daemon, except for an agent inside a task.
func TestRunCommand(t *testing.T) {
	tests := []struct {
		name     string
		taskFile string
		args     []string
		want     string
	}{
		{"daemon", "", []string{"--root", "x"}, "Daemon"},
		{"daemon, no arguments", "", nil, "Daemon"},
		{"inside a task", "/l/1.json", []string{"2"}, "Inside a running task"},
		{"--task given", "", []string{"--task", "l/1"}, "Inside a running task"},
		{"-task= given", "", []string{"-task=l/1", "3"}, "Inside a running task"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TASKD_TASK_FILE", tt.taskFile)
			c := runCommand(tt.args)
			if c == nil {
				t.Fatalf("runCommand(%q) = nil", tt.args)
			}
			if got, want := c.group, tt.want; got != want {
				t.Errorf("runCommand(%q) with TASKD_TASK_FILE=%q is in group %q, want %q", tt.args, tt.taskFile, got, want)
			}
		})
	}
}
