package daemon_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
)

// TestNotify_Command: the configured notify command is run, with the task
// (and its agent's summary) in its environment, when a task fails for good, needs a person, or (as
// configured) succeeds — once each, and not for a failure that is retried.
func TestNotify_Command(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "notices")
	marker := filepath.Join(t.TempDir(), "failed-once")
	denied := `{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s","permission_denials":[{"tool_name":"Bash","tool_input":{"command":"rm -rf build"}}]}`
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Notify = &config.NotifySpec{Succeeded: true, Timeout: "10s", Command: []string{"sh", "-c",
			`printf '%s|%s|%s|%s|%s|%s\n' "$TASKD_LIST" "$TASKD_TASK_ID" "$TASKD_STATE" "$TASKD_SUBJECT" "$TASKD_SUMMARY" "$TASKD_REASON" >> ` + out}}
		fc.Profiles = map[string]config.ProfileSpec{"fake": {Command: []string{"sh", "-c"}, Prompt: "arg", Output: "claude-stream", Flags: "none"}}
	})
	h.drop("l", "1", execTask("fails", "echo boom >&2; exit 3"))
	h.drop("l", "2", execTask("works", "echo checking; echo all green"))
	h.drop("l", "3", execTask("refused", "echo '"+denied+"'", "taskd.agent", `"fake"`))
	h.drop("l", "4", execTask("works the second time", "[ -e "+marker+" ] || { touch "+marker+"; exit 1; }", "taskd.retries", "1"))
	for id, s := range map[string]task.State{"1": task.Failed, "2": task.Succeeded, "3": task.NeedsHuman, "4": task.Succeeded} {
		h.waitState("l", id, s, time.Minute)
	}
	var lines []string
	h.waitFor("four notices", 30*time.Second, func() bool {
		data, _ := os.ReadFile(out)
		lines = strings.Split(strings.TrimSpace(string(data)), "\n")
		return len(lines) >= 4
	})
	slices.Sort(lines)
	logs := filepath.Join(h.listDir("l"), ".taskd", "runs", "1", "1")
	want := []string{
		"l|1|failed|fails||the agent failed (exit status 3): boom; logs: " + logs,
		"l|2|succeeded|works|all green|",
		"l|3|needs_human|refused|done|the agent was refused Bash (rm -rf build), so it did not do all it was asked.",
		"l|4|succeeded|works the second time||",
	}
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			t.Errorf("notice %d = %q, want it to start %q\nall: %q", i, lines[min(i, len(lines)-1)], w, lines)
		}
	}
	if len(lines) != 4 {
		t.Errorf("%d notices, want 4: %q", len(lines), lines)
	}
}

// TestNotify_BoundedAndLogged: a notify command that hangs is killed at
// its timeout and one that fails is logged; the daemon goes on running
// tasks either way.
func TestNotify_BoundedAndLogged(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		command []string
		log     string
	}{
		{"hangs", []string{"sleep", "60"}, "notification command timed out"},
		{"fails", []string{"sh", "-c", "echo no webhook >&2; exit 4"}, "notification command failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
				fc.Notify = &config.NotifySpec{Succeeded: true, Timeout: "1s", Command: tt.command}
			})
			for _, id := range []string{"1", "2", "3"} {
				h.drop("l", id, execTask("task "+id, "true"))
			}
			for _, id := range []string{"1", "2", "3"} {
				h.waitState("l", id, task.Succeeded, time.Minute)
			}
			h.waitFor("the command's failure in the log", 30*time.Second, func() bool {
				return strings.Count(h.logs.String(), tt.log) >= 3
			})
		})
	}
}

// TestNotify_NeverBlocksTheDaemon: a notify command that blocks until the
// test releases it (with a timeout far longer than the test) holds up only
// the notices queued behind it: while it blocks, another task starts and
// succeeds; released, the command runs for every notice, in order.
func TestNotify_NeverBlocksTheDaemon(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	release, notices := filepath.Join(dir, "release"), filepath.Join(dir, "notices")
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Notify = &config.NotifySpec{Succeeded: true, Timeout: "10m", Command: []string{"sh", "-c",
			`touch ` + dir + `/started-$TASKD_TASK_ID; while [ ! -e ` + release + ` ]; do sleep 0.02; done; echo "$TASKD_TASK_ID" >> ` + notices}}
	})
	t.Cleanup(func() { os.WriteFile(release, nil, 0o600) }) // before the daemon stops
	h.drop("l", "1", execTask("first", "true"))
	h.waitState("l", "1", task.Succeeded, time.Minute)
	h.waitFor("the notify command to run for task 1", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, "started-1"))
		return err == nil
	})

	h.drop("l", "2", execTask("second", "true"))
	h.waitState("l", "2", task.Succeeded, 30*time.Second)
	if _, err := os.Stat(notices); !os.IsNotExist(err) {
		t.Fatalf("the notify command finished before it was released (%v)", err)
	}

	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.waitFor("both notices", 30*time.Second, func() bool {
		data, _ := os.ReadFile(notices)
		return string(data) == "1\n2\n"
	})
}
