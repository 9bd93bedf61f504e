package daemon_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// The tests of head-of-line blocking (docs/scheduling.md): a lock another
// writer holds on one task file delays that task only.

// othersBound is how long the twenty tasks that share a list with a held
// task may take to run and be recorded, from the moment they are dropped:
// far below the lock's lockHold (30 s), even on a loaded machine.
const othersBound = 12 * time.Second

// claudeLock is Claude Code's lock on a task file, held by the real
// proper-lockfile (lock-hold.js) and refreshed by it until released.
type claudeLock struct {
	t      *testing.T
	file   string
	holder *exec.Cmd
	stdin  io.WriteCloser
	lines  <-chan string
	since  time.Time
}

// holdClaudeLock takes Claude Code's lock on file (which must exist).
func holdClaudeLock(t *testing.T, node, file string) *claudeLock {
	t.Helper()
	holder := exec.Command("node", filepath.Join(node, "lock-hold.js"), file)
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if holder.ProcessState == nil {
			holder.Process.Kill()
			holder.Wait()
		}
	})
	c := &claudeLock{t: t, file: file, holder: holder, stdin: stdin, lines: bufioLines(stdout)}
	if l := <-c.lines; l != "locked" {
		t.Fatalf("lock-hold.js did not take the lock on %s: %q", file, l)
	}
	c.since = time.Now()
	return c
}

// check fails the test if the lock is not in place: taskd broke it.
func (c *claudeLock) check() {
	c.t.Helper()
	if fi, err := os.Lstat(c.file + ".lock"); err != nil || !fi.IsDir() {
		c.t.Fatalf("Claude Code's lock on %s is gone while it holds it: %v", c.file, err)
	}
}

// unlock releases the lock, failing the test if it was broken meanwhile.
func (c *claudeLock) unlock() {
	c.t.Helper()
	io.WriteString(c.stdin, "release\n")
	if l := <-c.lines; l != "released" {
		c.t.Fatalf("Claude Code's lock on %s was broken: lock-hold.js says %q", c.file, l)
	}
	c.holder.Wait()
}

// holdFor keeps checking, until lockHold has passed since the first of
// locks was taken, that each lock is in place and that cond holds.
func holdFor(t *testing.T, locks []*claudeLock, cond func() error) {
	t.Helper()
	for time.Since(locks[0].since) < lockHold {
		for _, c := range locks {
			c.check()
		}
		if err := cond(); err != nil {
			t.Fatalf("%s after Claude Code took its locks: %v", time.Since(locks[0].since).Round(time.Millisecond), err)
		}
		waitUntilOrTimeout(200*time.Millisecond, func() bool { return false })
	}
}

// plainTask writes a task of Claude Code's own (not taskd's) at path, for
// a lock to be taken on.
func plainTask(t *testing.T, path string) {
	t.Helper()
	id := strings.TrimSuffix(filepath.Base(path), ".json")
	if err := os.WriteFile(path, []byte(`{"id": "`+id+`", "subject": "plan", "description": "", "activeForm": "planning", "status": "pending", "blocks": [], "blockedBy": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestLockWait_OthersGoOn: Claude Code holds, for lockHold (30 s), the
// locks of two task files of a list served with two slots: a task to run
// and a parent whose child is about to end. Twenty other tasks of the
// list, and the child, run and their ends are recorded within othersBound
// (neither the held claim nor the held resume keeps a slot or a place in
// line); the two held tasks do not run while their locks are held, which
// are never broken; once released, the task runs and the parent is
// resumed, each once.
func TestLockWait_OthersGoOn(t *testing.T) {
	t.Parallel()
	node := nodeToolsDir(t)
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 2 })
	m := t.TempDir()
	plainTask(t, filepath.Join(h.listDir("l"), "1.json"))
	plainTask(t, filepath.Join(h.listDir("l"), "p.json"))
	locks := []*claudeLock{
		holdClaudeLock(t, node, filepath.Join(h.listDir("l"), "1.json")),
		holdClaudeLock(t, node, filepath.Join(h.listDir("l"), "p.json")),
	}
	// Under the locks the files become taskd's (as a careless writer's
	// write would, ignoring the lock): taskd must wait for each lock.
	h.drop("l", "1", execTask("waits for the lock", "echo ran >> "+m+"/1"))
	h.drop("l", "p", `{"id": "p", "subject": "parent", "description": "", "activeForm": "p", "status": "in_progress", "owner": "taskd", "blocks": [], "blockedBy": [],
  "metadata": {"taskd": {"agent": "exec", "prompt": "echo ran >> `+m+`/p", "state": "waiting", "attempt": 1, "children": {"parallel": ["c"]}}}}`)
	h.drop("l", "c", execTask("child", "true", "taskd.parent", `"p"`))
	dropped := time.Now()
	for i := 2; i <= 21; i++ {
		h.drop("l", strconv.Itoa(i), execTask("other", "echo ran >> "+m+"/"+strconv.Itoa(i)))
	}
	others := []string{"c"}
	for i := 2; i <= 21; i++ {
		others = append(others, strconv.Itoa(i))
	}
	h.waitFor("the other tasks to run and be recorded", othersBound, func() bool {
		for _, id := range others {
			if tf, err := taskfile.ReadFile(filepath.Join(h.listDir("l"), id+".json")); err != nil || stateOf(tf) != task.Succeeded {
				return false
			}
		}
		return true
	})
	t.Logf("the %d other tasks ran and were recorded %s after they were dropped", len(others), time.Since(dropped).Round(time.Millisecond))
	held := func() error {
		for _, id := range []string{"1", "p"} {
			if readString(m, id) != "" {
				return fmt.Errorf("task %s ran under Claude Code's lock", id)
			}
		}
		if tf := h.read("l", "1"); stateOf(tf) != task.None {
			return fmt.Errorf("task 1 was claimed (%q) under Claude Code's lock", stateOf(tf))
		}
		if tf := h.read("l", "p"); stateOf(tf) != task.Waiting {
			return fmt.Errorf("the parent was written (%q) under Claude Code's lock", stateOf(tf))
		}
		return nil
	}
	holdFor(t, locks, held)
	for _, c := range locks {
		c.unlock()
	}
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	h.waitState("l", "p", task.Succeeded, 30*time.Second)
	for _, id := range append([]string{"1", "p"}, others[1:]...) {
		if got := readString(m, id); got != "ran\n" {
			t.Errorf("task %s ran %q, want once", id, got)
		}
	}
}

// TestLockWait_AfterCrash: the daemon is killed while four agents run,
// each with a process of its own in the background; while it is down,
// Claude Code takes the lock of one of those tasks and sixteen new tasks
// are dropped. The next daemon kills what every attempt left running,
// the held task's too, records the three it can and runs them again, and
// runs the sixteen, all within othersBound; the held task is recorded
// only once its lock is released (after lockHold), and then runs again.
func TestLockWait_AfterCrash(t *testing.T) {
	t.Parallel()
	node := nodeToolsDir(t)
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	m := t.TempDir()
	p := startDaemonProc(t, root, 4)
	for i := 1; i <= 4; i++ {
		id := strconv.Itoa(i)
		h.drop("l", id, execTask("leaves a process", fmt.Sprintf(`if [ "$TASKD_ATTEMPT" = 1 ]; then sleep 600 & echo $! > %[1]s/pid%[2]s; wait; fi; echo ran >> %[1]s/%[2]s`, m, id)))
	}
	pids := map[string]int{}
	h.waitFor("four agents and their background processes", 20*time.Second, func() bool {
		for i := 1; i <= 4; i++ {
			id := strconv.Itoa(i)
			pid, err := strconv.Atoi(strings.TrimSpace(readString(m, "pid"+id)))
			if err != nil || pid <= 0 {
				return false
			}
			pids[id] = pid
		}
		return true
	})
	for i := 1; i <= 4; i++ {
		h.waitState("l", strconv.Itoa(i), task.Running, 10*time.Second)
	}
	p.kill(t)
	lock := holdClaudeLock(t, node, filepath.Join(root, "l", "1.json"))
	for i := 5; i <= 20; i++ {
		h.drop("l", strconv.Itoa(i), execTask("new", "echo ran >> "+m+"/"+strconv.Itoa(i)))
	}
	restarted := time.Now()
	p2 := startDaemonProc(t, root, 4)
	h.waitFor("every leftover killed, and the tasks but the held one run and recorded", othersBound, func() bool {
		for _, pid := range pids {
			if alivePid(pid) {
				return false
			}
		}
		for i := 2; i <= 20; i++ {
			if tf, err := taskfile.ReadFile(filepath.Join(root, "l", strconv.Itoa(i)+".json")); err != nil || stateOf(tf) != task.Succeeded {
				return false
			}
		}
		return true
	})
	t.Logf("leftovers killed and 19 tasks recorded %s after the restart", time.Since(restarted).Round(time.Millisecond))
	holdFor(t, []*claudeLock{lock}, func() error {
		if tf := h.read("l", "1"); stateOf(tf) != task.Running {
			return fmt.Errorf("task 1 was written (%q) under Claude Code's lock", stateOf(tf))
		}
		return nil
	})
	lock.unlock()
	tf := h.waitState("l", "1", task.Succeeded, 30*time.Second)
	if n, _ := tf.Metadata.Object("taskd").Int("attempt"); n != 2 {
		t.Errorf("task 1 succeeded in attempt %d, want 2 (the first interrupted)", n)
	}
	p2.term(t)
	for i := 1; i <= 20; i++ {
		if got := readString(m, strconv.Itoa(i)); got != "ran\n" {
			t.Errorf("task %d ran %q, want once to its end", i, got)
		}
	}
}
