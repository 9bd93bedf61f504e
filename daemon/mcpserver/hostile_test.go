package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// errorOf calls a navigator tool and returns the error of flow's error
// object ("" when the call succeeded).
func (e *env) errorOf(tool string, args map[string]any) string {
	e.t.Helper()
	text, isErr := e.call(tool, args)
	if isErr {
		return text
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		e.t.Fatal(err)
	}
	msg, _ := got["error"].(string)
	return msg
}

// TestHostile_TaskFiles: Navigate reads and writes task files in the
// server's root only: a path elsewhere, one that climbs out with "..",
// a list that is a link, a task file that is a link, and a root others can
// write to are refused, and nothing outside is read or written.
func TestHostile_TaskFiles(t *testing.T) {
	e := newEnv(t, envOpts{})
	task := `{"id": "1", "subject": "x", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"workflowType": "quick-task", "currentStep": "work", "retryCount": 0}}`
	outside := t.TempDir()
	write(t, filepath.Join(outside, "l", "1.json"), task)
	write(t, filepath.Join(e.root, "ok", "1.json"), task)
	if err := os.Symlink(filepath.Join(outside, "l"), filepath.Join(e.root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "l", "1.json"), filepath.Join(e.root, "ok", "2.json")); err != nil {
		t.Fatal(err)
	}
	must(t, syscall.Mkfifo(filepath.Join(e.root, "ok", "3.json"), 0o600))
	for _, tt := range []struct {
		name, path, want string
	}{
		{"outside", filepath.Join(outside, "l", "1.json"), "is not a task file of the task root"},
		{"system file", "/etc/passwd", "is not a task file of the task root"},
		{"dot-dot", filepath.Join(e.root, "ok", "..", "..", filepath.Base(outside), "l", "1.json"), "is not a task file of the task root"},
		{"relative", "l/1.json", "is not a task file of the task root"},
		{"linked list", filepath.Join(e.root, "linked", "1.json"), "is a symbolic link"},
		{"linked file", filepath.Join(e.root, "ok", "2.json"), "symbolic link"},
		{"bad name", filepath.Join(e.root, "ok", "a b.json"), "is not a task file"},
		{"deep", filepath.Join(e.root, "ok", "sub", "1.json"), "is not a task file of the task root"},
		{"fifo", filepath.Join(e.root, "ok", "3.json"), "not a regular file"},
	} {
		got := make(chan string, 1)
		go func() { got <- e.errorOf("Navigate", map[string]any{"taskFilePath": tt.path, "result": "passed"}) }()
		select {
		case msg := <-got:
			if !strings.Contains(msg, tt.want) {
				t.Errorf("%s: %q, want %q", tt.name, msg, tt.want)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: Navigate blocked", tt.name)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "l", "1.json")); string(data) != task {
		t.Errorf("a file outside the root was written:\n%s", data)
	}
	if got := e.errorOf("Navigate", map[string]any{"taskFilePath": filepath.Join(e.root, "ok", "1.json"), "result": "passed"}); got != "" {
		t.Errorf("a task in the root: %s", got)
	}
	if err := os.Chmod(e.root, 0o777); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(e.root, 0o700)
	if got := e.errorOf("Navigate", map[string]any{"taskFilePath": filepath.Join(e.root, "ok", "1.json")}); !strings.Contains(got, "writable by other users") {
		t.Errorf("a root others can write to: %q", got)
	}
	if text, isErr := e.call("submit", map[string]any{"prompt": "x"}); !isErr || !strings.Contains(text, "writable by other users") {
		t.Errorf("submit into a root others can write to: %s", text)
	}
}

// TestHostile_TaskNames: the daemon's tools name tasks of the server's
// root only.
func TestHostile_TaskNames(t *testing.T) {
	e := newEnv(t, envOpts{})
	outside := t.TempDir()
	write(t, filepath.Join(outside, "l", "1.json"), `{"id": "1", "subject": "x", "owner": "taskd", "metadata": {"taskd": {"state": "running"}}}`)
	write(t, filepath.Join(e.root, "l", "1.json"), `{"id": "1", "subject": "x", "owner": "taskd"}`)
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"cancel", map[string]any{"task": filepath.Join(outside, "l", "1.json")}, "is not a task of the root"},
		{"show", map[string]any{"task": "../x/1"}, "is not a task id"},
		{"show", map[string]any{"task": "../1"}, "a list name is 1-128"},
		{"logs", map[string]any{"task": "l/../../1"}, "is not a task id"},
		{"status", map[string]any{"list": ".."}, "a list name is 1-128"},
		{"wait", map[string]any{"task": "l/1/../../x"}, "is not a task id"},
		{"resolve", map[string]any{"task": "/etc/passwd.json", "answer": "x"}, "is not a task of the root"},
	} {
		if text, isErr := e.call(tt.tool, tt.args); !isErr || !strings.Contains(text, tt.want) {
			t.Errorf("%s %v: %q, want %q", tt.tool, tt.args, text, tt.want)
		}
	}
	if c, _ := readTask(t, filepath.Join(outside, "l", "1.json")).Metadata.Object("taskd").Bool("cancel"); c {
		t.Error("a task outside the root was cancelled")
	}
}

// TestHostile_ProjectFiles: what flow's tools read and write for a client
// stays in its roots: a path outside, a link that leads out, a credential
// store, a FIFO (which would block a reader) are refused; a link at a file
// written is replaced, never followed.
func TestHostile_ProjectFiles(t *testing.T) {
	e := newEnv(t, envOpts{})
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.md"), "keep")
	write(t, filepath.Join(outside, "wf", "evil.json"), ctxWorkflow)
	flowDir := filepath.Join(e.project, ".flow", "workflows")
	os.MkdirAll(flowDir, 0o755)
	must(t, os.Symlink(filepath.Join(outside, "wf", "evil.json"), filepath.Join(flowDir, "evil.json")))
	must(t, syscall.Mkfifo(filepath.Join(flowDir, "fifo.json"), 0o600))
	must(t, os.Symlink(outside, filepath.Join(e.project, "out")))
	must(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(e.project, "diagram.md")))
	write(t, filepath.Join(e.project, "inside.md"), "mine")
	must(t, os.Symlink(filepath.Join(e.project, "inside.md"), filepath.Join(e.project, "diagram2.md")))

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, tt := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"Navigate", map[string]any{"workflowType": "evil"}, "outside the directories this session works in"},
			{"Navigate", map[string]any{"workflowType": "fifo"}, "not a regular file"},
			{"Diagram", map[string]any{"workflowType": "quick-task", "filePath": filepath.Join(outside, "d.md")}, "outside the directories"},
			{"Diagram", map[string]any{"workflowType": "quick-task", "filePath": "../d.md"}, "outside the directories"},
			{"Diagram", map[string]any{"workflowType": "quick-task", "filePath": "out/d.md"}, "which leads to"},
			{"Diagram", map[string]any{"workflowType": "quick-task", "filePath": "diagram.md"}, "which leads to"},
			{"CopyAgents", map[string]any{"agentIds": []string{"developer"}, "targetDir": "out"}, "outside the directories"},
			{"LoadWorkflows", map[string]any{"path": outside}, "outside the directories"},
			{"LoadWorkflows", map[string]any{"path": "/proc/self", "sourceRoot": "/"}, "never read"},
		} {
			if got := e.errorOf(tt.tool, tt.args); !strings.Contains(got, tt.want) {
				t.Errorf("%s %v: %q, want %q", tt.tool, tt.args, got, tt.want)
			}
		}
		list := e.callJSON("ListWorkflows", map[string]any{"source": "project"})
		if ids := idsOf(list["workflows"]); len(ids) != 0 {
			t.Errorf("ListWorkflows lists %v", ids)
		}
		if got := e.errorOf("Diagram", map[string]any{"workflowType": "quick-task", "filePath": "diagram2.md"}); got != "" {
			t.Errorf("Diagram over a link inside the project: %s", got)
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("a tool blocked (on the FIFO?)")
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "secret.md")); string(data) != "keep" {
		t.Errorf("the file a link pointed to was written: %q", data)
	}
	if fi, err := os.Lstat(filepath.Join(e.project, "diagram2.md")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the link was not replaced by the diagram: %v", fi.Mode())
	}
	if data, _ := os.ReadFile(filepath.Join(e.project, "inside.md")); string(data) != "mine" {
		t.Errorf("the file a link inside pointed to was written: %q", data)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 2 {
		t.Errorf("files appeared outside: %v", entries)
	}
}

// TestHostile_Credentials: a client whose root is the home still cannot
// reach its credential stores.
func TestHostile_Credentials(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.connect(envOpts{roots: []string{e.home}})
	write(t, filepath.Join(e.home, ".ssh", ".flow", "workflows", "x.json"), ctxWorkflow)
	for _, tt := range []struct {
		tool string
		args map[string]any
	}{
		{"Diagram", map[string]any{"workflowType": "quick-task", "filePath": "~/.ssh/authorized_keys"}},
		{"LoadWorkflows", map[string]any{"path": filepath.Join(e.home, ".ssh")}},
		{"CopyAgents", map[string]any{"agentIds": []string{"developer"}, "targetDir": ".aws"}},
	} {
		if got := e.errorOf(tt.tool, tt.args); !strings.Contains(got, "holds credentials") {
			t.Errorf("%s %v: %q", tt.tool, tt.args, got)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, ".ssh", "authorized_keys")); err == nil {
		t.Error("a file was written into ~/.ssh")
	}
}

// TestHostile_Roots: a client cannot make "/" or an ancestor of the home
// its root, nor a root that is not a local directory: those are ignored,
// and the server's project stands for a client that names no other.
func TestHostile_Roots(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.connect(envOpts{roots: []string{"/", filepath.Dir(e.home)}})
	got := e.callJSON("submit", map[string]any{"prompt": "x"})
	if got["cwd"] != e.project {
		t.Errorf("cwd %v, want the server's project %s", got["cwd"], e.project)
	}
	if text, isErr := e.call("submit", map[string]any{"prompt": "x", "cwd": "/etc"}); !isErr || !strings.Contains(text, "outside") {
		t.Errorf("cwd /etc: %s", text)
	}
	e2 := newEnv(t, envOpts{noProject: true, roots: []string{"/"}})
	if text, isErr := e2.call("submit", map[string]any{"prompt": "x"}); !isErr || !strings.Contains(text, "names no directory") {
		t.Errorf("no usable root: %s", text)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHostile_Huge: an argument too large for a task file is refused
// before anything is written; a message larger than the server reads is
// refused without harm to the next call.
func TestHostile_Huge(t *testing.T) {
	e := newEnv(t, envOpts{})
	path := filepath.Join(e.root, "l", "1.json")
	task := `{"id": "1", "subject": "x", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"workflowType": "quick-task", "currentStep": "work", "retryCount": 0}}`
	write(t, path, task)
	huge := strings.Repeat("ä", 600<<10)
	if got := e.errorOf("Navigate", map[string]any{"taskFilePath": path, "result": "passed", "description": huge}); !strings.Contains(got, "a task file holds at most") {
		t.Errorf("a description too large for the file: %.200q", got)
	}
	if data, _ := os.ReadFile(path); string(data) != task {
		t.Errorf("the task file was written:\n%.300s", data)
	}
	if got := e.errorOf("Navigate", map[string]any{"workflowType": "quick-task", "description": huge}); got != "" {
		t.Errorf("a start with a large description (nothing written): %.200s", got)
	}
}

// TestHostile_SpecialFiles: a FIFO or a link where the daemon's tools
// expect a task file, a link for a list, and a FIFO or a link for an
// attempt's log: every tool answers at once with the reason, none blocks
// on the FIFO, and nothing behind a link is read or written.
func TestHostile_SpecialFiles(t *testing.T) {
	e := newEnv(t, envOpts{})
	list := filepath.Join(e.root, "l")
	outside := t.TempDir()
	theirs := `{"id": "9", "subject": "x", "owner": "taskd", "status": "completed", "metadata": {"taskd": {"state": "succeeded", "attempt": 1, "result": {"success": true, "summary": "secret summary"}}}}`
	write(t, filepath.Join(outside, "9.json"), theirs)
	write(t, filepath.Join(outside, "secret.log"), "secret log\n")
	write(t, filepath.Join(list, "1.json"), `{"id": "1", "subject": "x", "owner": "taskd", "status": "completed", "metadata": {"taskd": {"state": "succeeded", "attempt": 2}}}`)
	must(t, syscall.Mkfifo(filepath.Join(list, "2.json"), 0o600))
	must(t, os.Symlink(filepath.Join(outside, "9.json"), filepath.Join(list, "3.json")))
	must(t, os.Symlink(outside, filepath.Join(e.root, "linked")))
	run1, run2 := filepath.Join(list, ".taskd", "runs", "1", "1"), filepath.Join(list, ".taskd", "runs", "1", "2")
	must(t, os.MkdirAll(run1, 0o700))
	must(t, syscall.Mkfifo(filepath.Join(run1, "stdout.log"), 0o600))
	must(t, os.MkdirAll(run2, 0o700))
	must(t, os.Symlink(filepath.Join(outside, "secret.log"), filepath.Join(run2, "stdout.log")))

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, tt := range []struct {
			tool string
			args map[string]any
			want string // in an error, or in wait's note
		}{
			{"show", map[string]any{"task": "l/2"}, "not a regular file"},
			{"show", map[string]any{"task": "l/3"}, "symbolic link"},
			{"show", map[string]any{"task": "linked/9"}, "symbolic link"},
			{"status", map[string]any{"task": "l/2"}, "not a regular file"},
			{"cancel", map[string]any{"task": "l/2"}, "not a regular file"},
			{"cancel", map[string]any{"task": "l/3"}, "symbolic link"},
			{"retry", map[string]any{"task": "l/2"}, "not a regular file"},
			{"resolve", map[string]any{"task": "l/3", "answer": "passed"}, "symbolic link"},
			{"logs", map[string]any{"task": "l/2"}, "not a regular file"},
			{"logs", map[string]any{"task": "linked/9"}, "symbolic link"},
			{"wait", map[string]any{"task": "l/2", "timeout": 30}, "the daemon refused the file"},
			{"wait", map[string]any{"task": "l/3", "timeout": 30}, "the daemon refused the file"},
		} {
			text, _ := e.call(tt.tool, tt.args)
			if !strings.Contains(text, tt.want) {
				t.Errorf("%s %v: %q, want %q", tt.tool, tt.args, text, tt.want)
			}
			if strings.Contains(text, "secret") {
				t.Errorf("%s %v read through a link: %q", tt.tool, tt.args, text)
			}
		}
		for _, attempt := range []int{1, 2} {
			text, _ := e.call("logs", map[string]any{"task": "l/1", "attempt": attempt})
			if strings.Contains(text, "secret") {
				t.Errorf("logs of attempt %d read through a link: %q", attempt, text)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("a tool blocked (on a FIFO?)")
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "9.json")); string(data) != theirs {
		t.Errorf("a task behind a link was written:\n%s", data)
	}
}
