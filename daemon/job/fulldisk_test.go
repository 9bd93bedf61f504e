package job_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/disktest"
	"github.com/taskd/taskd/taskfile"
)

// asideSlot is the slot of a claim made ahead of it, still in line,
// that says when its job steps out of line. (Release would leave a
// ticket in line: it gives back a slot held.)
type asideSlot struct{ aside chan struct{} }

func (asideSlot) Acquire(context.Context) error { return nil }
func (asideSlot) Release()                      {}
func (asideSlot) Ready() bool                   { return false }
func (s asideSlot) StepAside()                  { close(s.aside) }

// TestNotStarted_FullDiskGivesSlotBack: a claim made ahead of its slot
// whose agent could not start because the disk is full is taken back,
// which the full disk fails too: the take-back is held until there is
// room, and meanwhile the job is out of line (StepAside), its slot, if it
// held one, free for the tasks behind it, which a job in line for as long
// as the disk stays full would keep from their slots, or from being
// tried at all.
// With room again the claim is taken back and the cause returned: the
// task is held, to be tried again.
func TestNotStarted_FullDiskGivesSlotBack(t *testing.T) {
	disk := disktest.Small(t, 256<<10)
	dir := filepath.Join(disk, "l")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "1.json")
	if err := os.WriteFile(path, []byte(pending), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := taskfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.NewConfig(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	slot := asideSlot{aside: make(chan struct{})}
	j := &job.Job{Scope: job.Scope{Env: &job.Env{Config: cfg, Log: slog.New(slog.DiscardHandler)},
		List: &job.List{ID: "l", Dir: d, Events: eventlog.New(dir)}, ID: "1"}, Kind: job.Run, Slot: slot}
	c, err := j.Claim(t.Context(), attempt)
	if err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(disk, "filler")
	disktest.Fill(t, filler)
	cause := &fs.PathError{Op: "write", Path: filepath.Join(dir, ".taskd", "runs", "1", "1", "cmd.json"), Err: syscall.ENOSPC}
	type ended struct {
		t   *taskfile.Task
		err error
	}
	done := make(chan ended, 1)
	go func() {
		t, err := j.NotStarted(context.Background(), c, nil, cause)
		done <- ended{t, err}
	}()
	select {
	case <-slot.aside:
	case e := <-done:
		t.Fatalf("NotStarted returned (%v) on the full disk before stepping out of line", e.err)
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not step out of line while the take-back of the claim waits for room")
	}
	select {
	case e := <-done:
		t.Fatalf("NotStarted returned (%v) while the disk is full: the claim cannot have been taken back", e.err)
	default:
	}
	if got, want := task.Of(readTask(t, path)), task.Starting; got != want {
		t.Fatalf("on the full disk the task is %q, want %q (the take-back cannot be written)", got, want)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-done:
		if !errors.Is(e.err, syscall.ENOSPC) {
			t.Errorf("NotStarted = %v, want the cause (the task is held)", e.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the claim was not taken back once there was room")
	}
	if got, _ := os.ReadFile(path); string(got) != pending {
		t.Errorf("with room again the file is\n%s\nwant it as before the claim\n%s", got, pending)
	}
}

func readTask(t *testing.T, path string) *taskfile.Task {
	t.Helper()
	tf, err := taskfile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tf
}
