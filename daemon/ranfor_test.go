package daemon_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// TestDuration_NotTheWaitForASlot: an attempt prepared ahead of a slot
// (one slot, taken by another task) waits for it as long as that task
// runs; its durationMs — result.json, the TaskSucceeded event, what taskd
// show says it ran — is how long its agent ran, from its start, not that
// wait as well.
func TestDuration_NotTheWaitForASlot(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 1 })
	wait, release := gate(t)
	h.drop("l", "1", execTask("holds the slot", wait))
	h.drop("l", "2", execTask("quick", "echo quick"))
	h.waitState("l", "1", task.Running, 20*time.Second)
	h.waitPrepared("l", "2")
	prepared := time.Now()
	const waited = 1500 * time.Millisecond
	h.waitFor("task 2 to have waited for its slot", 10*time.Second, func() bool { return time.Since(prepared) > waited })
	release()
	h.waitState("l", "2", task.Succeeded, 20*time.Second)

	var res agent.Result
	if err := json.Unmarshal([]byte(h.runText("l", "2", 1, "result.json")), &res); err != nil || res.StartedAt == nil {
		t.Fatalf("result.json: %v", err)
	}
	if res.DurationMs >= waited.Milliseconds() {
		t.Errorf("result.json: durationMs %d: the agent (echo) ran for less than the %s its attempt waited for a slot", res.DurationMs, waited)
	}
	for _, e := range h.events("l") {
		if e.Type != eventlog.TaskSucceeded || e.Task != "2" {
			continue
		}
		if d, _ := e.Data["durationMs"].(float64); int64(d) != res.DurationMs {
			t.Errorf("TaskSucceeded durationMs %v, result.json %d", e.Data["durationMs"], res.DurationMs)
		}
		if end := res.StartedAt.Add(time.Duration(res.DurationMs) * time.Millisecond); end.After(e.TS) {
			t.Errorf("the agent started at %s and ran %dms: past its end, logged at %s", res.StartedAt, res.DurationMs, e.TS)
		}
	}
}
