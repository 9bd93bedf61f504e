package status

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// list makes a list dir under a new root with task 1 and the run folders
// given (attempt → file → content), and returns the root.
func list(t *testing.T, task string, runs map[int]map[string]string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "l")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "1.json"), []byte(task), 0o600); err != nil {
		t.Fatal(err)
	}
	for n, files := range runs {
		rd := filepath.Join(dir, ".taskd", "runs", "1", fmt.Sprint(n))
		if err := os.MkdirAll(rd, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(rd, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

const ended = `{"subject": "s", "owner": "taskd", "status": "pending", "metadata": {"taskd": {"state": "failed", "attempt": 2, "error": "boom", "runDir": ".taskd/runs/1/2"}}}`

func TestShowOutput(t *testing.T) {
	long := strings.Repeat("a line of the transcript\n", 10_000) // past maxTail
	tests := []struct {
		name  string
		files map[string]string
		lines int
		file  string
		want  []string
		cut   bool
	}{
		{"transcript", map[string]string{"transcript.log": "one\ntwo\n", "stdout.log": "{}\n", "stderr.log": "e\n"}, 10, "transcript.log", []string{"one", "two"}, false},
		{"stdout when no transcript", map[string]string{"stdout.log": "out\n", "stderr.log": "e\n"}, 10, "stdout.log", []string{"out"}, false},
		{"stderr when the rest is empty", map[string]string{"transcript.log": "\n", "stdout.log": "", "stderr.log": "why\n"}, 10, "stderr.log", []string{"why"}, false},
		{"the last lines", map[string]string{"stdout.log": "1\n2\n3\n4\n"}, 2, "stdout.log", []string{"3", "4"}, true},
		{"a long log's end only", map[string]string{"stdout.log": "first\n" + long + "last\n"}, 2, "stdout.log", []string{"a line of the transcript", "last"}, true},
		{"no lines asked", map[string]string{"stdout.log": "x\n"}, 0, "", nil, false},
		{"nothing written", map[string]string{"stdout.log": "", "stderr.log": ""}, 10, "", nil, false},
		{"no log made", map[string]string{}, 10, "", nil, false},
		{"stderr alone made", map[string]string{"stderr.log": "why\n"}, 10, "stderr.log", []string{"why"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := list(t, ended, map[int]map[string]string{2: tt.files})
			d, err := Show(root, "l", "1", ShowOptions{Lines: tt.lines})
			if err != nil {
				t.Fatal(err)
			}
			if tt.file == "" {
				if d.Output != nil {
					t.Fatalf("output %+v, want none", d.Output)
				}
				return
			}
			if d.Output == nil {
				t.Fatal("no output")
			}
			if got := filepath.Base(d.Output.File); got != tt.file || fmt.Sprint(d.Output.Lines) != fmt.Sprint(tt.want) || d.Output.Cut != tt.cut {
				t.Errorf("output %s %q cut %v, want %s %q cut %v", got, d.Output.Lines, d.Output.Cut, tt.file, tt.want, tt.cut)
			}
		})
	}
}

func TestShowUsage(t *testing.T) {
	root := list(t, ended, map[int]map[string]string{
		1: {"cmd.json": `{"profile": "claude"}`, "result.json": `{"costUsd": 0.1, "durationMs": 1000, "turns": 3, "progress": {"tokens": {"input": 100, "output": 10, "cacheRead": 5}}}`},
		2: {"cmd.json": `{"profile": "claude"}`, "result.json": `{"costUsd": 0.2, "durationMs": 2000, "turns": 4, "progress": {"turns": 4, "costEstimated": true, "tokens": {"input": 200}}}`},
		3: {"cmd.json": `{"profile": "exec"}`}, // prepared, never ran: no result
	})
	d, err := Show(root, "l", "1", ShowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Agent != "exec" || d.Last != nil {
		t.Errorf("latest run: agent %q, usage %+v; want exec and none", d.Agent, d.Last)
	}
	tot := d.Total
	if tot == nil || tot.Runs != 2 || tot.Turns != 7 || tot.Tokens != 315 || tot.DurationMs != 3000 || !tot.Estimated || tot.CostUSD == nil || *tot.CostUSD != 0.3 {
		t.Errorf("total %+v", tot)
	}
	if d.Outcome != "failed" || d.Reason != "boom" || d.Attempts != 2 {
		t.Errorf("outcome %q, reason %q, attempts %d", d.Outcome, d.Reason, d.Attempts)
	}
}

func TestShowErrors(t *testing.T) {
	root := list(t, ended, nil)
	for _, tt := range []struct{ list, id, want string }{
		{"l", "2", "no task l/2"},
		{"m", "1", `no list "m"`},
		{"l", "../1", "not a task id"},
		{"../l", "1", "no list"},
	} {
		if _, err := Show(root, tt.list, tt.id, ShowOptions{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Show(%s, %s) = %v, want %q", tt.list, tt.id, err, tt.want)
		}
	}
}

func TestStateWord(t *testing.T) {
	for _, tt := range []struct {
		t    Task
		want string
	}{
		{Task{Rejected: "bad", State: "failed"}, "rejected"},
		{Task{Held: "disk full", State: "running"}, "held"},
		{Task{State: "needs_human", Taskd: true}, "needs_human"},
		{Task{Status: "in_progress"}, "in_progress"},
		{Task{Taskd: true, Status: "completed"}, "completed"},
		{Task{Taskd: true, Status: "pending", BlockedBy: []string{"3"}}, "blocked"},
		{Task{Taskd: true, Status: "pending"}, "pending"},
	} {
		if got := StateWord(&tt.t); got != tt.want {
			t.Errorf("StateWord(%+v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}
