package daemon_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/clock"
)

// TestPause_SurvivesRestart: a fake agent reports a usage limit that
// resets an hour later on the daemon's clock ("Claude AI usage limit
// reached|<unix time>"), which pauses its task and its profile. The daemon
// stops; a second task of the profile is queued while none runs; a
// restarted daemon keeps the profile paused (read from the paused task's
// file): the second task does not start while the clock is before the
// reset, and once the clock passes it both succeed without meeting the
// limit again. The agent meets the limit until the test lifts it (a file),
// which it does only as it moves the clock past the reset.
func TestPause_SurvivesRestart(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	fake := config.ProfileSpec{Command: []string{"sh", "-c"}, Prompt: "arg", Flags: "none", OnLimit: "pause"}
	h := startDaemonClock(t, clk, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"plan": fake}
	})
	reset := t0.Add(time.Hour)
	lifted := filepath.Join(t.TempDir(), "lifted")
	at := strconv.FormatInt(reset.Unix(), 10)
	script := `if [ ! -e '` + lifted + `' ]; then echo "Claude AI usage limit reached|` + at + `"; exit 1; fi; echo done`
	h.drop("l", "1", execTask("limited", script, "taskd.agent", `"plan"`))
	tf := h.waitState("l", "1", task.Paused, time.Minute)
	if lim := pauseOf(tf); !lim.Until.Equal(reset) || lim.Profile != "plan" {
		t.Fatalf("pause = %+v, want the profile plan paused until %v", lim, reset)
	}

	h.stop()
	h.drop("l", "2", execTask("queued behind the limit", script, "taskd.agent", `"plan"`))
	h.start()
	h.settled("l", "c1") // the restarted daemon has seen task 2
	clk.Advance(59 * time.Minute)
	h.settled("l", "c2")
	if n := countEvents(h.events("l"), eventlog.TaskStarted, "2"); n != 0 {
		t.Fatalf("task 2 started %d times before the reset (the clock %v before it)", n, reset.Sub(clk.Now()))
	}

	if err := os.WriteFile(lifted, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute + time.Second)
	h.waitState("l", "2", task.Succeeded, time.Minute)
	h.waitState("l", "1", task.Succeeded, time.Minute)
	evs := h.waitEvents("l", eventlog.TaskSucceeded, "2", 1)
	if n := countEvents(evs, eventlog.TaskPaused, "2"); n != 0 {
		t.Errorf("the queued task started before the reset and met the limit (%d pauses)", n)
	}
	if n := countEvents(evs, eventlog.TaskPaused, "1"); n != 1 {
		t.Errorf("task 1 paused %d times, want once", n)
	}
	if out := string(h.runFile("l", "2", 1, "stdout.log")); !strings.Contains(out, "done") {
		t.Errorf("task 2's first attempt printed %q", out)
	}
}
