package plain_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/job/jobtest"
	"github.com/taskd/taskd/daemon/plain"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/taskfile"
)

// TestRun_WaitIsKeptWhenItsChildrenEndBeforeItIsWritten: a task whose
// agent succeeded while its parallel item still ran waits for it, and its
// return chain is made once the item has ended — also when the item ends
// between the job's look at it and the write of the wait. The interleaving
// is forced with Claude Code's lock (the real proper-lockfile): the test
// holds the task's lock from the moment its agent runs, so the job's write
// of the attempt's end waits for it; while it waits, the item ends, and
// the lock is released. The write must still say waiting (the loop then
// resumes the task at once); a success there would end the task without
// its return chain ever being made.
func TestRun_WaitIsKeptWhenItsChildrenEndBeforeItIsWritten(t *testing.T) {
	node := nodeToolsDir(t)
	h := jobtest.New(t, jobtest.Options{})
	file := h.List.Dir.File("1")
	ran := filepath.Join(h.Cwd, "agent-ran")
	// The agent says it runs, and ends once the test holds the lock.
	script := "touch " + ran + "; until [ -d " + file + ".lock ]; do sleep 0.01; done; echo main"
	h.Put("1", execTask("1", h.Cwd, script, `"parallel":["echo item"],"return":["echo back"]`))

	waits := make(chan string, 8)
	ctx := taskfile.WithLockWait(context.Background(), func(lock string) { waits <- lock })
	seen := h.Read("1")
	type outcome struct {
		t   *taskfile.Task
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		got, err := plain.Tasks{}.Do(ctx, h.Job("1", job.Run), seen)
		done <- outcome{got, err}
	}()

	waitfor.Cond(t, "the agent to run", 60*time.Second, func() bool { _, err := os.Stat(ran); return err == nil })
	lock := holdLock(t, node, file)
	select {
	case l := <-waits:
		if l != file+".lock" {
			t.Fatalf("the job waited for %s, want the task's lock", l)
		}
	case o := <-done:
		t.Fatalf("the job ended (%v) without waiting for the task's lock\n%s", o.err, h.Taskd("1"))
	case <-time.After(60 * time.Second):
		t.Fatalf("the job did not come to write the attempt's end\n%s", h.Log)
	}
	// The job has looked at its parallel item, found it running, and now
	// waits to write: the item ends meanwhile.
	items := task.Strings(task.RecordOf(h.Read("1")).Children, children.Parallel)
	if len(items) != 1 {
		t.Fatalf("parallel items %v, want one\n%s", items, h.Taskd("1"))
	}
	if _, err := h.List.Dir.Update(t.Context(), items[0], func(c *taskfile.Task) error {
		rec := task.RecordOf(c)
		rec.Attempt = 1
		_, err := task.End(c, task.Succeed, rec)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	lock.release()

	var o outcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the job did not end once the lock was released\n%s", h.Log)
	}
	if o.err != nil {
		t.Fatalf("Run = %v\n%s", o.err, h.Log)
	}
	if got := task.Of(h.Read("1")); got != task.Waiting {
		t.Fatalf("after its attempt the task is %q, want %q: its item ended while the wait was being written\n%s", got, task.Waiting, h.Taskd("1"))
	}

	// The loop resumes it at once, its item having ended: it completes,
	// and its return chain is made.
	if _, err := h.Do(plain.Tasks{}, "1", job.Resume); err != nil {
		t.Fatalf("Resume = %v\n%s", err, h.Log)
	}
	rs := task.Strings(task.RecordOf(h.Read("1")).Children, children.Returns)
	if len(rs) != 1 {
		t.Fatalf("the task's return chain is %v, want one step\n%s", rs, h.Taskd("1"))
	}
	m := h.Read(rs[0]).Metadata.Object("taskd")
	if of, _ := m.String("returnOf"); of != "1" {
		t.Errorf("step %s is the return of %q, want 1", rs[0], of)
	}
	if p, _ := m.String("prompt"); p != "echo back" {
		t.Errorf("step %s runs %q, want the task's return item", rs[0], p)
	}
}

// heldLock is Claude Code's lock on a task file, held by lock-hold.js.
type heldLock struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin interface{ Write([]byte) (int, error) }
	lines *bufio.Scanner
}

// holdLock takes Claude Code's lock on file with the real proper-lockfile.
func holdLock(t *testing.T, node, file string) *heldLock {
	t.Helper()
	cmd := exec.Command("node", filepath.Join(node, "lock-hold.js"), file)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	l := &heldLock{t: t, cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	if !l.lines.Scan() || l.lines.Text() != "locked" {
		t.Fatalf("lock-hold.js did not take the lock on %s: %q", file, l.lines.Text())
	}
	return l
}

// release releases the lock.
func (l *heldLock) release() {
	l.t.Helper()
	l.stdin.Write([]byte("release\n"))
	if !l.lines.Scan() || l.lines.Text() != "released" {
		l.t.Fatalf("lock-hold.js did not release: %q", l.lines.Text())
	}
	l.cmd.Wait()
}

// nodeToolsDir returns testdata/node, skipping (or, with
// TASKD_REQUIRE_TOOLS=1, failing) when Node or its packages are missing.
func nodeToolsDir(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "node"))
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "proper-lockfile")); err != nil {
		missing = "the npm packages are not installed (run: npm ci --prefix testdata/node)"
	}
	if missing != "" {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s, and TASKD_REQUIRE_TOOLS=1", missing)
		}
		t.Skipf("skipping: %s", missing)
	}
	return dir
}
