package daemon

import (
	"os"
	"testing"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/taskfile"
)

// TestFinished_SameBytesBackDuringJob: the loop last saw a task file's
// dropped contents; its job then wrote the end (completed), and before the
// job reported, the file was deleted and dropped again with the very bytes
// the loop had seen. The event for it looks like no change, but the job's
// report must not be taken for the file: the task is pending again.
func TestFinished_SameBytesBackDuringJob(t *testing.T) {
	t.Parallel()
	d, l := servedList(t, &config.FileConfig{})
	dir := l.Dir

	file := dir.File("1")
	dropped := []byte(`{"id": "1", "subject": "again", "description": "", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`)
	put := func(data []byte) {
		t.Helper()
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(dropped)
	d.refresh(l, "1") // the loop sees the dropped file
	e := l.entries["1"]
	if e == nil || e.status != taskfile.StatusPending {
		t.Fatalf("after the drop: entry %+v, want a pending task", e)
	}
	j := &work{Job: &job.Job{Scope: job.Scope{List: l.List, ID: "1"}}, l: l, slot: &slot{}}
	e.job = j

	// The job writes the end; the file is then dropped again as it was.
	end, err := dir.Update(t.Context(), "1", func(t *taskfile.Task) error {
		t.Status = taskfile.StatusCompleted
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	put(dropped)
	d.refresh(l, "1") // the event for the file put back
	d.finished(jobDone{job: j, task: end})

	if got, want := l.entries["1"].status, taskfile.StatusPending; got != want {
		t.Errorf("after the job reported: status %q, want %q (the file as it is)", got, want)
	}
}
