package daemon_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// TestPause_SurvivesRestart: a fake agent reports a usage limit that
// resets a few seconds later ("Claude AI usage limit reached|<unix
// time>"), which pauses its task and its profile. The daemon stops; a
// second task of the profile is queued while none runs; a restarted
// daemon keeps the profile paused (read from the paused task's file):
// the second task starts only after the reset, and both succeed without
// meeting the limit again.
func TestPause_SurvivesRestart(t *testing.T) {
	t.Parallel()
	fake := config.ProfileSpec{Command: []string{"sh", "-c"}, Prompt: "arg", Flags: "none", OnLimit: "pause"}
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"plan": fake}
	})
	reset := time.Now().Add(6 * time.Second).Truncate(time.Second)
	at := strconv.FormatInt(reset.Unix(), 10)
	script := `if [ "$(date +%s)" -lt ` + at + ` ]; then echo "Claude AI usage limit reached|` + at + `"; exit 1; fi; echo done`
	h.drop("l", "1", execTask("limited", script, "taskd.agent", `"plan"`))
	tf := h.waitState("l", "1", task.Paused, time.Minute)
	if lim := pauseOf(tf); !lim.Until.Equal(reset) || lim.Profile != "plan" {
		t.Fatalf("pause = %+v, want the profile plan paused until %v", lim, reset)
	}

	h.stop()
	h.drop("l", "2", execTask("queued behind the limit", script, "taskd.agent", `"plan"`))
	h.start()
	if time.Now().After(reset.Add(-2 * time.Second)) {
		t.Fatalf("the restart took too long to tell anything (%v left before the reset)", time.Until(reset))
	}

	h.waitState("l", "2", task.Succeeded, time.Minute)
	h.waitState("l", "1", task.Succeeded, time.Minute)
	evs := h.waitEvents("l", eventlog.TaskSucceeded, "2", 1)
	if n := countEvents(evs, eventlog.TaskPaused, "2"); n != 0 {
		t.Errorf("the queued task started before the reset and met the limit (%d pauses)", n)
	}
	for _, e := range eventsFor(evs, eventlog.TaskStarted, "2") {
		if e.TS.Before(reset) {
			t.Errorf("task 2 started at %v, before the reset at %v", e.TS.Format(time.StampMilli), reset.Format(time.StampMilli))
		}
	}
	if n := countEvents(evs, eventlog.TaskPaused, "1"); n != 1 {
		t.Errorf("task 1 paused %d times, want once", n)
	}
	if out := string(h.runFile("l", "2", 1, "stdout.log")); !strings.Contains(out, "done") {
		t.Errorf("task 2's first attempt printed %q", out)
	}
}
