package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
)

// runFile reads a file of attempt n's run folder of task id.
func (h *harness) runFile(list, id string, n int, name string) []byte {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join(h.listDir(list), ".taskd", "runs", id, strconv.Itoa(n), name))
	if err != nil {
		h.t.Fatal(err)
	}
	return data
}

// argvOf reads the command line of attempt n of task id from its cmd.json.
func (h *harness) argvOf(list, id string, n int) []string {
	var cmd struct{ Argv []string }
	json.Unmarshal(h.runFile(list, id, n, "cmd.json"), &cmd)
	return cmd.Argv
}

// TestClaude_DeniedWrite: the real Claude Code CLI, refused its Write
// (no permission mode, no tools allowed), reports success; the task is not
// recorded as succeeded but asks a person, naming the denied tool, its
// target and the fix, and no file was written. Answered "allow", its
// session goes on with exactly that file allowed (an Edit rule: Claude
// Code checks a Write against those), and the file is there. A task that
// says onDenied "fail" fails instead.
func TestClaude_DeniedWrite(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	project := t.TempDir()
	target := filepath.Join(project, "hello.txt")
	other := t.TempDir()
	stub := claudestub.New(t, func(n int, body string) claudestub.Turn {
		last := lastMessage(body)
		switch {
		case strings.Contains(last, `"tool_result"`):
			return claudestub.Turn{Text: `Done. {"success": true, "summary": "wrote the file"}`}
		case strings.Contains(body, "second.txt"):
			return claudestub.Turn{Write: map[string]string{"file_path": filepath.Join(other, "second.txt"), "content": "hello\n"}}
		}
		return claudestub.Turn{Write: map[string]string{"file_path": target, "content": "hello\n"}}
	})
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{})
	})
	h.drop("l", "1", `{"subject": "write hello", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+project+`", "prompt": "Write hello to hello.txt."}}}`)

	tf := h.waitState("l", "1", task.NeedsHuman, 2*time.Minute)
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("%s exists although the Write was denied (%v)", target, err)
	}
	rule := "Edit(/" + target + ")"
	m := tf.Metadata.Object("taskd")
	hitl := m.Object("hitl")
	kind, _ := hitl.String("kind")
	reason, _ := hitl.String("reason")
	if kind != "permission" || !strings.Contains(reason, "Write ("+target+")") || !strings.Contains(reason, "permissionMode") || !strings.Contains(reason, "Answer allow to allow exactly "+rule) {
		t.Errorf("hitl kind %q reason %q", kind, reason)
	}
	if got := task.Strings(hitl, "options"); !slices.Equal(got, []string{"allow", "allow-tool", "retry", "fail", "leave"}) {
		t.Errorf("options %v", got)
	}
	if e, _ := m.String("error"); e != "the agent was refused Write ("+target+")" {
		t.Errorf("error %q", e)
	}
	var res agent.Result
	json.Unmarshal(h.runFile("l", "1", 1, "result.json"), &res)
	if res.Success || len(res.Denials) != 1 || res.Denials[0] != (agent.Denial{Tool: "Write", Target: target, Rule: rule}) {
		t.Errorf("result.json: success %v denials %+v", res.Success, res.Denials)
	}
	h.waitEvents("l", eventlog.TaskNeedsHuman, "1", 1)

	if _, err := control.Resolve(t.Context(), mustOpen(t, h.listDir("l")), "1", "allow"); err != nil {
		t.Fatal(err)
	}
	tf = h.waitState("l", "1", task.Succeeded, 2*time.Minute)
	if data, err := os.ReadFile(target); err != nil || string(data) != "hello\n" {
		t.Errorf("after allow, %s = %q, %v", target, data, err)
	}
	if tools := task.Strings(tf.Metadata.Object("taskd"), "tools"); !slices.Equal(tools, []string{rule}) {
		t.Errorf("tools after allow = %v", tools)
	}
	if argv := strings.Join(h.argvOf("l", "1", 2), " "); !strings.Contains(argv, "--allowedTools "+rule+" ") || !strings.Contains(argv, "--resume "+res.SessionID) {
		t.Errorf("the second attempt's argv %q does not continue session %s with %s allowed", argv, res.SessionID, rule)
	}

	// Told to fail on a denial, a task fails, with the denial as its error.
	h.drop("l", "2", `{"subject": "write hello", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+other+`", "onDenied": "fail", "retries": 2, "prompt": "Write hello to second.txt."}}}`)
	h.waitFor("task l/2 to end", 2*time.Minute, func() bool {
		tf = h.read("l", "2")
		return task.Of(tf).Ended() || task.Of(tf) == task.NeedsHuman
	})
	if task.Of(tf) != task.Failed {
		t.Fatalf("task 2 is %s:\n%s", task.Of(tf), tf.Raw())
	}
	if e, _ := tf.Metadata.Object("taskd").String("error"); !strings.HasPrefix(e, "the agent was refused Write ("+filepath.Join(other, "second.txt")+"); logs: ") {
		t.Errorf("error %q", e)
	}
	if n, _ := tf.Metadata.Object("taskd").Int("attempt"); n != 1 {
		t.Errorf("a denied attempt was retried: attempt %d", n)
	}
}

// TestDenied_isErrorNeverSuccess: a claude result with is_error true is
// not a success, whatever its subtype and whatever report its text holds;
// its own words are the task's error.
func TestDenied_isErrorNeverSuccess(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"fake": {Command: []string{"sh", "-c"}, Prompt: "arg", Output: "claude-stream", Flags: "none", OnLimit: "fail"}}
	})
	result := `{"type":"result","subtype":"success","is_error":true,"result":"Prompt is too long {\"success\": true}","session_id":"s"}`
	h.drop("l", "1", execTask("long", "echo '"+result+"'", "taskd.agent", `"fake"`))
	tf := h.waitState("l", "1", task.Failed, time.Minute)
	if e, _ := tf.Metadata.Object("taskd").String("error"); !strings.HasPrefix(e, `Prompt is too long {"success": true}; logs: `) {
		t.Errorf("error %q", e)
	}
}
