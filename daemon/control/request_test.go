package control

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

// TestRequest: the task a request asks for, field by field, and what a
// request lacks or has wrong.
func TestRequest(t *testing.T) {
	cwd, _ := os.Getwd()
	for _, tt := range []struct {
		name string
		r    Request
		base string // a whole task, as JSON
		want string // the task file, compact
		err  error
	}{
		{name: "prompt", r: Request{Prompt: "/read a.go\nFix it\nnow", Agent: "claude", Tools: []string{"Read"}, MaxTurns: 3, Cwd: "/src"},
			want: `{"id":"","subject":"Fix it","description":"","activeForm":"","status":"pending","blocks":[],"blockedBy":[],"metadata":{"taskd":{"prompt":"/read a.go\nFix it\nnow","agent":"claude","cwd":"/src","tools":["Read"],"maxTurns":3}}}`},
		{name: "workflow", r: Request{Prompt: "Add a flag", Workflow: "quick-task", Autonomy: true, Cwd: "~/app"},
			want: `{"id":"","subject":"Add a flag","description":"Add a flag","activeForm":"","status":"pending","blocks":[],"blockedBy":[],"metadata":{"taskd":{"cwd":"~/app"},"workflowType":"quick-task","userDescription":"Add a flag","autonomy":true}}`},
		{name: "relative cwd", r: Request{Prompt: "x", Cwd: "sub", BlockedBy: []string{"4"}},
			want: `{"id":"","subject":"x","description":"","activeForm":"","status":"pending","blocks":[],"blockedBy":["4"],"metadata":{"taskd":{"prompt":"x","cwd":"` + filepath.Join(cwd, "sub") + `"}}}`},
		{name: "base keeps its cwd and subject", base: `{"id": "9", "subject": "mine", "metadata": {"taskd": {"cwd": "/there"}}}`, r: Request{Agent: "exec"},
			want: `{"id":"","subject":"mine","metadata":{"taskd":{"cwd":"/there","agent":"exec"}},"description":"","activeForm":"","status":"pending","blocks":[],"blockedBy":[]}`},
		{name: "no prompt", r: Request{Agent: "exec"}, err: ErrNoPrompt},
		{name: "autonomy alone", r: Request{Prompt: "x", Autonomy: true}, err: ErrAutonomyNeedsWorkflow},
		{name: "negative", r: Request{Prompt: "x", MaxCostUSD: -1}, err: ErrNegativeBound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var base *taskfile.Task
			if tt.base != "" {
				var err error
				if base, err = taskfile.Parse([]byte(tt.base), "base", ""); err != nil {
					t.Fatal(err)
				}
			}
			got, err := tt.r.Task(base)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if g := compact(t, got.Marshal()); g != tt.want {
				t.Errorf("task\n got %s\nwant %s", g, tt.want)
			}
		})
	}
}

// TestSubmit_TooLarge: a task larger than a task file may be is refused
// and nothing is written.
func TestSubmit_TooLarge(t *testing.T) {
	dir, err := OpenList(t.TempDir(), "l", true)
	if err != nil {
		t.Fatal(err)
	}
	tf, _ := Request{Prompt: strings.Repeat("x", taskfile.MaxSize)}.Task(nil)
	if _, err := Submit(context.Background(), dir, tf); err == nil || !strings.Contains(err.Error(), "a task file holds at most") {
		t.Fatalf("error %v", err)
	}
	if ids, _ := dir.List(); len(ids) != 0 {
		t.Errorf("written: %v", ids)
	}
}

// TestParseRef: LIST/ID, a file's path, an id alone in the default list
// or in the only list that has it.
func TestParseRef(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/1.json", "a/2.json", "b/2.json"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o700)
		os.WriteFile(filepath.Join(root, p), []byte(`{}`), 0o600)
	}
	for _, tt := range []struct {
		ref, list, want, err string
	}{
		{ref: "a/1", want: root + " a 1"},
		{ref: "1", want: root + " a 1"},
		{ref: "2", list: "b", want: root + " b 2"},
		{ref: filepath.Join(root, "b", "2.json"), want: root + " b 2"},
		{ref: "/x/y/l/3.json", err: "is not a task of the root " + root},
		{ref: filepath.Join(root, "a", "sub", "1.json"), err: "not in a list directly under the root"},
		{ref: filepath.Join(root, "1.json"), err: "not in a list directly under the root"},
		{ref: filepath.Join(root, "a", "..", "..", "1.json"), err: "is not a task of the root"},
		{ref: "2", err: "which list? 2 lists have it: a/2, b/2"},
		{ref: "7", err: "no list in " + root + " has a task 7 (lists: a, b)"},
	} {
		r, err := ParseRef(root, tt.ref, tt.list)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: error %v, want %q", tt.ref, err, tt.err)
		case tt.err == "" && (err != nil || r.Root+" "+r.List+" "+r.ID != tt.want):
			t.Errorf("%q = %+v, %v; want %s", tt.ref, r, err, tt.want)
		}
	}
}

func compact(t *testing.T, data []byte) string {
	t.Helper()
	v, err := taskfile.ParseValue(data)
	if err != nil {
		t.Fatal(err)
	}
	s := string(taskfile.AppendJSON(nil, v))
	return strings.NewReplacer("\n", "", "  ", "", ": ", ":", ", ", ",").Replace(s)
}
