package remote_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// chainLen is the length of the blockedBy chains of the fault scenario.
const chainLen = 5

// serverDown is how long the fault scenario keeps the NATS server down.
const serverDown = 10 * time.Second

// Ensure that with a coordinator and two workers, faultTasks exec tasks in
// blockedBy chains, a workflow and a parent with children all complete,
// each attempt run at most once and recorded once, through every fault:
// a worker killed with SIGKILL while it runs attempts (they come back
// after its ack wait, are recorded as interrupted and run again on the
// other worker), the coordinator killed and restarted (results that
// arrived meanwhile are recorded; nothing runs twice), and the NATS server
// stopped for serverDown (a task claimed meanwhile says why it waits; all
// go on when the server is back).
func TestRemote_Faults(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	w1 := c.worker("w1", "--profiles", "exec", "--concurrency", "3")
	c.worker("w2", "--profiles", "exec", "--concurrency", "3")
	marks := t.TempDir()
	ran := filepath.Join(marks, "ran")
	// Every agent writes a line: task, attempt, worker directory; then works a while.
	script := `echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> ` + ran + `; sleep 0.25`
	var ids []string
	for i := 1; i <= faultTasks; i++ {
		id := strconv.Itoa(i)
		blocked := []string{}
		if (i-1)%chainLen != 0 {
			blocked = []string{strconv.Itoa(i - 1)}
		}
		c.drop("l", id, execTask(script, marks, map[string]any{"blockedBy": blocked}))
		ids = append(ids, id)
	}
	wf := `{"id": "two", "name": "two", "nodes": {
  "start": {"type": "start"},
  "build": {"type": "task", "name": "Build", "command": "echo built >> ` + filepath.Join(marks, "wf") + `"},
  "check": {"type": "gate", "name": "Check", "maxRetries": 1, "command": "grep -q built ` + filepath.Join(marks, "wf") + `"},
  "end": {"type": "end", "result": "success"}},
 "edges": [{"from": "start", "to": "build"}, {"from": "build", "to": "check"},
  {"from": "check", "to": "end", "on": "passed"}, {"from": "check", "to": "build", "on": "failed"}]}`
	if err := os.MkdirAll(filepath.Join(c.listDir("l"), ".taskd", "workflows"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.listDir("l"), ".taskd", "workflows", "two.json"), []byte(wf), 0o600); err != nil {
		t.Fatal(err)
	}
	c.drop("l", "wf", `{"subject": "a workflow", "owner": "taskd", "metadata": {"workflowType": "two", "userDescription": "build and check", "taskd": {"cwd": "`+marks+`"}}}`)
	c.drop("l", "parent", execTask("/push name=ka \"echo child a\"\n/push name=kb \"echo child b\"\n/run\necho parent", marks, nil))

	succeeded := func() int {
		n := 0
		for _, id := range ids {
			if t := c.read("l", id); t != nil && task.Of(t) == task.Succeeded {
				n++
			}
		}
		return n
	}

	// A worker dies while it runs attempts.
	c.waitFor("w1 to run an attempt", 60*time.Second, func() bool { return runningOn(c, "l", ids, "w1") != "" })
	c.kill(w1)
	killedAt := time.Now()
	t.Logf("w1 killed after %s", time.Since(c.started))

	// The coordinator dies, and comes back after a worker finished an
	// attempt it could not record.
	c.waitFor("a third of the tasks to succeed", 90*time.Second, func() bool { return succeeded() >= faultTasks/3 })
	ended := strings.Count(c.workers["w2"].out.String(), "attempt ended")
	c.kill(c.coord)
	c.waitFor("a result to arrive while the coordinator is down", 30*time.Second, func() bool {
		return strings.Count(c.workers["w2"].out.String(), "attempt ended") > ended
	})
	c.restart(c.coord)
	t.Logf("coordinator restarted after %s", time.Since(c.started))

	// The server goes away for a while; the tasks whose attempts wait for
	// it (a task dropped meanwhile, or those already running when there
	// are more tasks than slots) say why they wait.
	c.waitFor("two thirds of the tasks to succeed", 90*time.Second, func() bool { return succeeded() >= 2*faultTasks/3 })
	c.nats.Stop()
	down := time.After(serverDown)
	c.drop("l", "late", execTask(`echo "late 1" >> `+ran, marks, nil))
	c.waitFor("a task to say it waits for the server", serverDown-time.Second, func() bool {
		for _, id := range append([]string{"late"}, ids...) {
			if t := c.read("l", id); t != nil {
				if s, _ := t.Metadata.Object("taskd").String("dispatch"); strings.Contains(s, "NATS server") {
					return true
				}
			}
		}
		return false
	})
	status, _ := exec.Command(taskdBinary(t), "status", "--root", c.root).CombinedOutput()
	if !strings.Contains(string(status), "waiting for the NATS server") {
		t.Errorf("taskd status does not say why the late task waits:\n%s", status)
	}
	<-down
	c.nats.Restart()
	t.Logf("server back after %s", time.Since(c.started))

	all := append(append([]string{}, ids...), "wf", "parent", "late")
	c.waitState("l", all, task.Succeeded, 120*time.Second)
	var kids []string
	for _, id := range listIDs(c, "l") {
		if tk := c.read("l", id); tk != nil {
			if p, _ := tk.Metadata.Object("taskd").String("parent"); p == "parent" {
				kids = append(kids, id)
			}
		}
	}
	if len(kids) != 2 {
		t.Errorf("the parent's children: %v, want 2", kids)
	}
	c.waitState("l", kids, task.Succeeded, 10*time.Second)
	t.Logf("all done after %s", time.Since(c.started))

	checkRecordedOnce(t, c.events("l"))
	runs := checkRanOnce(t, ran)
	checkInterruptions(t, c.events("l"), ran)
	interrupted := 0
	for _, id := range ids {
		n, _ := c.read("l", id).Metadata.Object("taskd").Int("interrupted")
		interrupted += int(n)
	}
	if interrupted == 0 {
		t.Errorf("no attempt was recorded as interrupted, yet a worker was killed while it ran some\n%s", c.logs())
	}
	// After w1 died, only w2 ran attempts.
	for _, id := range ids {
		run := lastRunWorker(c, "l", id)
		if run == "w1" && finishedAt(c, "l", id).After(killedAt.Add(3*time.Second)) {
			t.Errorf("task %s finished after w1 was killed, on w1", id)
		}
	}
	if runs < faultTasks {
		t.Errorf("%d attempts ran, want at least %d", runs, faultTasks)
	}
	if !strings.Contains(c.coord.out.String(), "an attempt's worker is lost") {
		t.Errorf("the coordinator did not record an attempt of the killed worker lost\n%s", c.coord.out)
	}
}

// runningOn returns a task of ids whose running attempt worker name has
// started, or "".
func runningOn(c *cluster, list string, ids []string, name string) string {
	for _, id := range ids {
		t := c.read(list, id)
		if t == nil || task.Of(t) != task.Running {
			continue
		}
		if lastRunWorker(c, list, id) == name {
			return id
		}
	}
	return ""
}

// lastRunWorker is the worker cmd.json of a task's last attempt names.
func lastRunWorker(c *cluster, list, id string) string {
	t := c.read(list, id)
	if t == nil {
		return ""
	}
	n, _ := t.Metadata.Object("taskd").Int("attempt")
	data, err := os.ReadFile(filepath.Join(c.listDir(list), ".taskd", "runs", id, strconv.Itoa(int(n)), "cmd.json"))
	if err != nil {
		return ""
	}
	var cmd struct {
		Remote struct {
			Worker string `json:"worker"`
		} `json:"remote"`
	}
	json.Unmarshal(data, &cmd)
	return cmd.Remote.Worker
}

func finishedAt(c *cluster, list, id string) time.Time {
	s, _ := c.read(list, id).Metadata.Object("taskd").String("finishedAt")
	at, _ := time.Parse(time.RFC3339Nano, s)
	return at
}

func listIDs(c *cluster, list string) []string {
	entries, _ := os.ReadDir(c.listDir(list))
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && !strings.HasPrefix(id, ".") {
			ids = append(ids, id)
		}
	}
	return ids
}

// endEvents are the events that record how an attempt ended.
var endEvents = map[string]bool{
	eventlog.TaskSucceeded: true, eventlog.TaskFailed: true, eventlog.TaskInterrupted: true,
	eventlog.TaskTimedOut: true, eventlog.TaskCancelled: true, eventlog.TaskWaiting: true,
}

// checkRecordedOnce fails t if an attempt's end was recorded twice, or a
// task succeeded twice.
func checkRecordedOnce(t *testing.T, evs []eventlog.Event) {
	t.Helper()
	ends := map[string]int{}
	succeeded := map[string]int{}
	for _, e := range evs {
		if endEvents[e.Type] {
			ends[fmt.Sprintf("%s/%d", e.Task, e.Attempt)]++
		}
		if e.Type == eventlog.TaskSucceeded {
			succeeded[e.Task]++
		}
	}
	for k, n := range ends {
		if n > 1 {
			t.Errorf("the end of attempt %s was recorded %d times", k, n)
		}
	}
	for k, n := range succeeded {
		if n > 1 {
			t.Errorf("task %s succeeded %d times", k, n)
		}
	}
}

// checkRanOnce fails t if an attempt's agent ran twice (a line "task
// attempt" twice in ran), and returns how many ran.
func checkRanOnce(t *testing.T, ran string) int {
	t.Helper()
	f, err := os.Open(ran)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		seen[sc.Text()]++
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("attempt %q ran %d times", k, n)
		}
	}
	return len(seen)
}

// checkInterruptions fails t if an attempt whose agent ran (a line in
// ran) was recorded as interrupted for any reason but a worker that went
// silent: an attempt a worker ran while the coordinator was down is
// followed to its end after the restart, not interrupted; one claimed but
// not yet sent when the coordinator died is sent at the restart, not
// recorded interrupted blaming the server.
func checkInterruptions(t *testing.T, evs []eventlog.Event, ran string) {
	t.Helper()
	data, _ := os.ReadFile(ran)
	lines := strings.Split(string(data), "\n")
	for _, e := range evs {
		if e.Type != eventlog.TaskInterrupted {
			continue
		}
		msg, _ := e.Data["error"].(string)
		if strings.Contains(msg, "NATS server") {
			t.Errorf("attempt %s/%d was recorded interrupted blaming the server: %q", e.Task, e.Attempt, msg)
		}
		if !strings.Contains(msg, "stopped answering") && slices.Contains(lines, fmt.Sprintf("%s %d", e.Task, e.Attempt)) {
			t.Errorf("attempt %s/%d ran, and was recorded as interrupted: %q", e.Task, e.Attempt, msg)
		}
	}
}
