package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// agentScript writes an executable shell script (an agent at the process
// boundary, which ignores its arguments and stdin) and returns its path.
func agentScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitStateIn waits until task id of list is in one of states, and
// returns it as it was then.
func (h *harness) waitStateIn(list, id string, timeout time.Duration, states ...task.State) *taskfile.Task {
	h.t.Helper()
	var last *taskfile.Task
	h.waitFor(fmt.Sprintf("task %s/%s to be one of %v", list, id, states), timeout, func() bool {
		t, err := taskfile.ReadFile(filepath.Join(h.listDir(list), id+".json"))
		if err != nil {
			return false
		}
		last = t
		return slices.Contains(states, task.Of(t))
	})
	return last
}

// TestLimit_OnLimit: a profile's onLimit decides what a usage limit does.
// "fail" fails the task with the agent's words, even for a profile whose
// flags would pause (claude's), and leaves the profile free: the next
// task of it starts. Unset, a command profile (flags none) fails too. The
// default of a claude-flagged profile, and "pause", pause (here and in
// TestLimit_OverloadedBacksOffToMax, TestPause_UsageLimitForms).
func TestLimit_OnLimit(t *testing.T) {
	t.Parallel()
	limited := agentScript(t, `echo "You've hit your limit · resets 8pm (Europe/Lisbon)"; exit 1`)
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{
			"strict":  {Command: []string{limited}, Flags: "claude", OnLimit: "fail"},
			"command": {Command: []string{limited}, Flags: "none"},
			"paused":  {Command: []string{limited}, Flags: "claude"},
		}
	})
	for _, c := range []struct {
		id, profile string
		want        task.State
	}{{"1", "strict", task.Failed}, {"2", "strict", task.Failed}, {"3", "command", task.Failed}, {"4", "paused", task.Paused}} {
		h.drop("l", c.id, `{"subject": "`+c.profile+`", "owner": "taskd", "metadata": {"taskd": {"agent": "`+c.profile+`", "cwd": "`+t.TempDir()+`", "prompt": "work"}}}`)
		tf := h.waitStateIn("l", c.id, time.Minute, task.Failed, task.Paused)
		if got := task.Of(tf); got != c.want {
			t.Fatalf("task %s (%s) is %s, want %s:\n%s", c.id, c.profile, got, c.want, tf.Raw())
		}
		evs := h.waitEvents("l", eventlog.TaskStarted, c.id, 1)
		if c.want == task.Paused {
			continue
		}
		if msg, _ := tf.Metadata.Object("taskd").String("error"); !strings.Contains(msg, "You've hit your limit") {
			t.Errorf("task %s (%s): error %q does not give the agent's words", c.id, c.profile, msg)
		}
		if _, ok := tf.Metadata.Object("taskd").Get("pause"); ok || countEvents(evs, eventlog.TaskPaused, c.id) != 0 {
			t.Errorf("task %s (%s) paused:\n%s", c.id, c.profile, tf.Raw())
		}
	}
}

// TestLimit_OverloadedBacksOffToMax: a fake agent prints claude's HTTP 529
// error ("API Error: 529 … overloaded_error"), which names no reset time,
// three times in a row: each time its task pauses (no failure counted)
// for a backoff that starts at the profile's limitBackoff, doubles, and
// stops at its limitBackoffMax; the fourth attempt succeeds.
func TestLimit_OverloadedBacksOffToMax(t *testing.T) {
	t.Parallel()
	const backoff, most = time.Second, 2 * time.Second
	count := filepath.Join(t.TempDir(), "runs")
	overloaded := agentScript(t, `echo x >> `+count+`
if [ "$(wc -l < `+count+`)" -le 3 ]; then
  echo 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
  exit 1
fi
echo 'done after the overload'`)
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{
			"busy": {Command: []string{overloaded}, Flags: "claude", LimitBackoff: backoff.String(), LimitBackoffMax: most.String()},
		}
	})
	h.drop("l", "1", `{"subject": "overloaded", "owner": "taskd", "metadata": {"taskd": {"agent": "busy", "cwd": "`+t.TempDir()+`", "prompt": "work"}}}`)
	tf := h.waitStateIn("l", "1", time.Minute, task.Succeeded, task.Failed)
	if got := task.Of(tf); got != task.Succeeded {
		t.Fatalf("the task is %s, want succeeded:\n%s", got, tf.Raw())
	}
	evs := h.waitEvents("l", eventlog.TaskSucceeded, "1", 1)
	paused := eventsFor(evs, eventlog.TaskPaused, "1")
	if len(paused) != 3 {
		t.Fatalf("%d TaskPaused events, want 3", len(paused))
	}
	// Each pause lasts the backoff of its step, from when it began (its
	// event is logged once it is written, later on a loaded machine).
	for i, want := range []time.Duration{backoff, most, most} {
		e := paused[i]
		since, serr := time.Parse(time.RFC3339Nano, fmt.Sprint(e.Data["since"]))
		until, err := time.Parse(time.RFC3339Nano, fmt.Sprint(e.Data["until"]))
		if err != nil || serr != nil {
			t.Fatalf("pause %d: since %v, until %v", i+1, e.Data["since"], e.Data["until"])
		}
		if got := until.Sub(since); got != want {
			t.Errorf("pause %d lasts %v, want %v", i+1, got, want)
		}
		if e.TS.Before(since) {
			t.Errorf("pause %d was logged at %v, before it began (%v)", i+1, e.TS, since)
		}
		if msg, _ := e.Data["message"].(string); !strings.Contains(msg, "529") || !strings.Contains(msg, "Overloaded") {
			t.Errorf("pause %d message %q", i+1, msg)
		}
	}
	for i := 1; i < len(paused); i++ {
		if started := eventsFor(evs, eventlog.TaskStarted, "1")[i]; started.TS.Before(paused[i-1].TS) {
			t.Errorf("attempt %d started before pause %d", i+1, i)
		}
	}
	if n, _ := tf.Metadata.Object("taskd").Int("failures"); n != 0 {
		t.Errorf("the overloads counted as %d failures", n)
	}
}
