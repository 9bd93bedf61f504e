package daemon

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Ensure a job's report does not hide a change another writer made to the
// task while the job ran: a child that its parent's job restarted while
// the child's own delivery job was still recording must run again, not
// stay as the delivery job last saw it.
func TestFinished_FileChangedDuringJob(t *testing.T) {
	t.Parallel()
	d, l := servedList(t, &config.FileConfig{DefaultAgent: "exec"})
	dir, path := l.Dir, l.Dir.Path()

	write := func(content string) *taskfile.Task {
		t.Helper()
		if err := os.WriteFile(filepath.Join(path, "1.json"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		tf, err := dir.Read("1")
		if err != nil {
			t.Fatal(err)
		}
		return tf
	}
	// What the job last wrote: the task ended (cancelled).
	stale := write(`{"id": "1", "subject": "child", "status": "pending", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true", "state": "cancelled", "attempt": 1}}}`)
	d.refresh(l, "1")
	e := l.entries["1"]
	j := &work{Job: &job.Job{Scope: job.Scope{List: l.List, ID: "1"}, Kind: job.Deliver}, l: l, slot: &slot{}}
	e.job = j
	// Another writer restarts it while the job is still recording; the
	// loop sees the change, but the task has a job.
	write(`{"id": "1", "subject": "child", "status": "pending", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true", "attempt": 1}}}`)
	d.refresh(l, "1")
	clear(l.candidates)
	l.ready, l.inReady = nil, map[string]bool{}

	d.finished(jobDone{job: j, task: stale})

	if e.state == task.Cancelled {
		t.Fatalf("entry state %q: the job's stale report hid the restart", e.state)
	}
	_, considered := l.candidates["1"]
	if !considered && !l.inReady["1"] {
		t.Errorf("the restarted task is neither a candidate nor ready (state %q)", e.state)
	}
}
