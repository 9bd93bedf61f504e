package jobtest_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/job/jobtest"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// marker is a handler that claims its task, notes the job's kind in it and
// logs an event, as a kind of work would.
type marker struct{}

func (marker) Do(ctx context.Context, j *job.Job, t *taskfile.Task) (*taskfile.Task, error) {
	c, err := j.Claim(ctx, func(t *taskfile.Task, sp *task.Spec) error { sp.Attempt++; return nil })
	if err != nil {
		return nil, err
	}
	if err := j.Slot.Acquire(ctx); err != nil || !j.Slot.Ready() {
		return nil, err
	}
	j.Emit(eventlog.Event{Type: eventlog.TaskStarted, Attempt: c.Spec.Attempt})
	return j.List.Dir.Update(ctx, j.ID, func(t *taskfile.Task) error {
		task.Meta(t).Set("kind", j.Kind.String())
		return nil
	})
}

// TestHarness: a task put in the harness's list is run by a handler's
// job, and what the job wrote and logged is read back.
func TestHarness(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	for _, d := range []string{h.Root, h.Cwd, h.List.Path()} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Fatalf("%s is not a directory: %v", d, err)
		}
	}
	if strings.HasPrefix(h.Cwd, h.Root) || filepath.Base(h.List.Path()) != jobtest.ListID || h.Env.Config.Root != h.Root {
		t.Errorf("layout: root %s, cwd %s, list %s", h.Root, h.Cwd, h.List.Path())
	}
	h.Put("1", `{"id":"1","subject":"s","status":"pending","owner":"taskd","metadata":{"taskd":{"agent":"exec","prompt":"true"}}}`)
	got, err := h.Do(marker{}, "1", job.Resume)
	if err != nil {
		t.Fatal(err)
	}
	if task.Of(got) != task.Running || h.Taskd("1") != `{"agent":"exec","prompt":"true","state":"running","startedAt":`+quoted(h, "startedAt")+`,"attempt":1,"runDir":".taskd/runs/1/1","kind":"resume"}` {
		t.Errorf("after the job: %s", h.Taskd("1"))
	}
	if ev := h.Events("1"); !slices.Equal(ev, []string{"TaskStarted"}) {
		t.Errorf("events %v", ev)
	}
	if h.Events("2") != nil || h.RunFile("1", 1, "result.json") != "" {
		t.Error("events or a run file that nothing wrote")
	}
}

func quoted(h *jobtest.Harness, key string) string {
	s, _ := h.Read("1").Metadata.Object("taskd").String(key)
	return `"` + s + `"`
}
