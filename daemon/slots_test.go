package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
)

// TestConcurrencyLimits runs short agents in two lists, one limited to a
// single agent, and has every agent count the agents alive around it: a
// marker directory made when it starts and removed before it exits, and
// the markers it sees, written down twice while it runs. No agent may see
// more than the global limit, or more than its list's limit of its own
// list; and the global limit must be reached, or the check proves nothing.
// Slots change hands outside the daemon's loop (slots.go), so this is the
// check that the hand-over never lets one slot serve two agents.
func TestConcurrencyLimits(t *testing.T) {
	const global, perTasks = 2, 8
	h := startDaemon(t, []string{"a", "b"}, func(fc *daemon.FileConfig) {
		fc.Concurrency = global
		fc.Lists = map[string]daemon.ListConfig{"a": {Concurrency: 1}}
	})
	work := t.TempDir()
	live := filepath.Join(work, "live")
	seen := filepath.Join(work, "seen")
	for _, d := range []string{live, seen} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Each agent: mark itself alive, look twice with a pause between, then
	// unmark itself before it exits (its slot is given back on exit).
	// List a's agents take longer, so that b's free slots while a's next
	// task waits for one.
	script := fmt.Sprintf(`me="$TASKD_LIST-$TASKD_TASK_ID"
mkdir %[1]s/"$me"
ls %[1]s > %[2]s/"$me".1
case $TASKD_LIST in a) sleep 0.2 ;; *) sleep 0.05 ;; esac
ls %[1]s > %[2]s/"$me".2
rmdir %[1]s/"$me"`, live, seen)
	for i := 1; i <= perTasks; i++ {
		for _, l := range []string{"a", "b"} {
			h.drop(l, strconv.Itoa(i), execTask(l+" task", script))
		}
	}
	for i := 1; i <= perTasks; i++ {
		for _, l := range []string{"a", "b"} {
			if got := h.waitState(l, strconv.Itoa(i), "succeeded", 60*time.Second); got.Status != "completed" {
				t.Fatalf("task %s/%d: status %q, want completed", l, i, got.Status)
			}
		}
	}

	entries, err := os.ReadDir(seen)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(entries), 2*2*perTasks; got != want {
		t.Fatalf("%d observations, want %d", got, want)
	}
	maxAll, maxA := 0, 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(seen, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		alive := strings.Fields(string(data))
		inA := 0
		for _, m := range alive {
			if strings.HasPrefix(m, "a-") {
				inA++
			}
		}
		if len(alive) > global {
			t.Errorf("%s saw %d agents alive, more than the limit %d: %v", e.Name(), len(alive), global, alive)
		}
		if inA > 1 {
			t.Errorf("%s saw %d agents of list a alive, more than its limit 1: %v", e.Name(), inA, alive)
		}
		maxAll, maxA = max(maxAll, len(alive)), max(maxA, inA)
	}
	if maxAll != global || maxA != 1 {
		t.Errorf("at most %d agents (%d of list a) were seen alive at once; want the limits %d and 1 reached", maxAll, maxA, global)
	}
}

// TestConcurrencyLimits_LoopCondition: a loop's condition is checked by a
// command of its own after each run (untilCommand); with one slot, no other
// task's agent may run beside that command.
func TestConcurrencyLimits_LoopCondition(t *testing.T) {
	h := startDaemon(t, []string{"l"}, func(fc *daemon.FileConfig) { fc.Concurrency = 1 })
	work := t.TempDir()
	live := filepath.Join(work, "live")
	seen := filepath.Join(work, "seen")
	for _, d := range []string{live, seen} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// mark.sh NAME: alive for a moment, looking around twice; it fails,
	// so that as a loop condition it never ends the loop early.
	mark := filepath.Join(work, "mark.sh")
	script := fmt.Sprintf(`me="$1-$$"
mkdir %[1]s/"$me"
ls %[1]s > %[2]s/"$me".1
sleep 0.1
ls %[1]s > %[2]s/"$me".2
rmdir %[1]s/"$me"
exit 1
`, live, seen)
	if err := os.WriteFile(mark, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h.drop("l", "1", s2Task(fmt.Sprintf("/subtask {loop:3 && untilCommand:sh %s until} sh %s loop; true", mark, mark), work, nil))
	for i := 2; i <= 6; i++ {
		h.drop("l", strconv.Itoa(i), execTask("other", fmt.Sprintf("sh %s other; true", mark)))
	}
	for i := 1; i <= 6; i++ {
		h.waitState("l", strconv.Itoa(i), "succeeded", 60*time.Second)
	}
	entries, err := os.ReadDir(seen)
	if err != nil {
		t.Fatal(err)
	}
	untils := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(seen, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if alive := strings.Fields(string(data)); len(alive) > 1 {
			t.Errorf("%s saw %d agents alive with one slot: %v", e.Name(), len(alive), alive)
		}
		if strings.HasPrefix(e.Name(), "until-") {
			untils++
		}
	}
	if untils == 0 {
		t.Fatalf("the loop's condition command never ran (%d observations)", len(entries))
	}
}
