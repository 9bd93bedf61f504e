package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

// TestFlagsAnywhere: a command's flags count wherever they stand among its
// arguments; "--" ends them, so a prompt may begin with "-"; a word that
// looks like a flag the command does not know is refused, never folded
// into the prompt. The task files submit writes say so.
func TestFlagsAnywhere(t *testing.T) {
	isolate(t)
	root := filepath.Join(t.TempDir(), "tasks")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args       []string
		wantPrompt string
		wantMeta   map[string]string // metadata.taskd fields, as JSON
		wantCode   int
		wantErr    string
	}{
		{args: []string{"fix it", "--worktree", "--permission-mode", "acceptEdits"}, wantPrompt: "fix it",
			wantMeta: map[string]string{"worktree": "true", "permissionMode": `"acceptEdits"`}},
		{args: []string{"--worktree", "fix", "--permission-mode=acceptEdits", "it"}, wantPrompt: "fix it",
			wantMeta: map[string]string{"worktree": "true", "permissionMode": `"acceptEdits"`}},
		{args: []string{"--max-turns", "3", "--", "-v prints nothing", "--worktree"}, wantPrompt: "-v prints nothing --worktree",
			wantMeta: map[string]string{"maxTurns": "3", "worktree": "null"}},
		{args: []string{"fix it", "--worktre"}, wantCode: 2, wantErr: "flag provided but not defined: -worktre"},
		{args: []string{"fix", "-v", "it"}, wantCode: 2, wantErr: "flag provided but not defined: -v"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{"submit", "--root", root, "--list", "l", "--agent", "exec"}, tt.args...)
			out, errOut, code := runCLI(t, args...)
			if code != tt.wantCode {
				t.Fatalf("taskd %q: exit %d, want %d; stderr:\n%s", args, code, tt.wantCode, errOut)
			}
			if tt.wantCode != 0 {
				if !strings.Contains(errOut, tt.wantErr) || !strings.Contains(errOut, "usage: taskd submit") {
					t.Errorf("stderr = %q, want %q and the usage", errOut, tt.wantErr)
				}
				if out != "" {
					t.Errorf("a refused submit printed %q", out)
				}
				return
			}
			tf, err := taskfile.ReadFile(strings.TrimSpace(out))
			if err != nil {
				t.Fatal(err)
			}
			m := tf.Metadata.Object("taskd")
			if got, _ := m.String("prompt"); got != tt.wantPrompt {
				t.Errorf("prompt = %q, want %q", got, tt.wantPrompt)
			}
			for k, want := range tt.wantMeta {
				v, _ := m.Get(k)
				if got := string(taskfile.AppendJSON(nil, v)); got != want {
					t.Errorf("metadata.taskd.%s = %s, want %s", k, got, want)
				}
			}
		})
	}
	// A refused submit wrote nothing.
	entries, _ := filepath.Glob(filepath.Join(root, "l", "*.json"))
	if len(entries) != 3 {
		t.Errorf("the list holds %d task files, want the 3 accepted: %v", len(entries), entries)
	}

	// The same rule for the other commands: flags after a task's name.
	for _, args := range [][]string{
		{"status", "l/1", "--root", root, "--json"},
		{"resolve", "l/1", "allow", "--root", root, "--note", "go on"},
		{"workflows", "show", "quick-task", "--json"},
	} {
		if _, errOut, code := runCLI(t, args...); code == 2 {
			t.Errorf("taskd %q: a usage error: %s", args, errOut)
		}
	}
}
