package daemon_test

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/clock"
	"github.com/taskd/taskd/taskfile"
)

// replacements counts, with real inotify, how often the file name of
// list dir is put in place (each of the daemon's writes renames a new
// version in) from now until the returned stop is called.
func replacements(t *testing.T, dir, name string) (count func() int64, stop func()) {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		t.Fatal(err)
	}
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.Events {
			if filepath.Base(ev.Name) == name && ev.Has(fsnotify.Create) {
				n.Add(1)
			}
		}
	}()
	stop = func() { w.Close(); <-done }
	t.Cleanup(func() { w.Close() })
	return n.Load, stop
}

// TestAhead_ShortAgentEndsInOneWrite: a task claimed ahead of its slot
// (starting) whose agent ends before it is due to be marked running is
// not written running and then ended: its end is the one write after the
// claim, and it carries when the agent started, not when the task began to
// wait. The daemon's clock stands still while the agent runs, so the mark
// is never due.
func TestAhead_ShortAgentEndsInOneWrite(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	h := startDaemonClock(t, clk, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 1 })
	wait, release := gate(t)
	h.drop("l", "1", execTask("holds the slot", wait))
	h.waitState("l", "1", task.Running, 20*time.Second)
	h.drop("l", "2", execTask("short", "true"))
	h.waitPrepared("l", "2")
	claimed := h.waitState("l", "2", task.Starting, 10*time.Second)
	count, stop := replacements(t, h.listDir("l"), "2.json")
	clk.Advance(time.Second)
	release()
	tf := h.waitState("l", "2", task.Succeeded, 30*time.Second)
	h.waitFor("the end of task 2 seen by inotify", 10*time.Second, func() bool { return count() >= 1 })
	stop()
	if got, want := count(), int64(1); got != want {
		t.Errorf("task 2's file was replaced %d times after its claim, want %d (its end alone)", got, want)
	}
	if got, want := task.RecordOf(tf).StartedAt, t0.Add(time.Second); !got.Equal(want) {
		t.Errorf("task 2 says it started at %v, want %v, when its slot came (claimed at %v)", got, want, task.RecordOf(claimed).StartedAt)
	}
}

// TestAhead_MarkedRunningOnceStarted: a task claimed ahead of its slot
// whose agent runs on is marked running (status in_progress, so Claude
// Code shows it) once the mark is due after its agent started, with the
// time the agent started.
func TestAhead_MarkedRunningOnceStarted(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	h := startDaemonClock(t, clk, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 1 })
	wait1, release1 := gate(t)
	wait2, release2 := gate(t)
	started := filepath.Join(t.TempDir(), "started")
	h.drop("l", "1", execTask("holds the slot", wait1))
	h.waitState("l", "1", task.Running, 20*time.Second)
	h.drop("l", "2", execTask("long", "touch "+started+"; "+wait2))
	h.waitPrepared("l", "2")
	h.waitState("l", "2", task.Starting, 10*time.Second)
	clk.Advance(time.Second)
	release1()
	h.waitFor("task 2's agent to start", 20*time.Second, func() bool { _, err := os.Stat(started); return err == nil })
	if tf := h.read("l", "2"); task.Of(tf) != task.Starting {
		t.Fatalf("task 2 is %s before its mark is due, want starting", task.Of(tf))
	}
	clk.Advance(time.Second) // the mark is due
	tf := h.waitState("l", "2", task.Running, 10*time.Second)
	if tf.Status != taskfile.StatusInProgress {
		t.Errorf("task 2 runs with status %q, want in_progress", tf.Status)
	}
	if got, want := task.RecordOf(tf).StartedAt, t0.Add(time.Second); !got.Equal(want) {
		t.Errorf("task 2 marked running with startedAt %v, want %v", got, want)
	}
	release2()
	h.waitState("l", "2", task.Succeeded, 20*time.Second)
}
