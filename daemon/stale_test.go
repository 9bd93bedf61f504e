package daemon

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskd/taskd/taskfile"
)

// Ensure a job's report does not hide a change another writer made to the
// task while the job ran: a child that its parent's job restarted while
// the child's own delivery job was still recording must run again, not
// stay as the delivery job last saw it.
func TestFinished_FileChangedDuringJob(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "l")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, err := NewConfig(root, nil, &FileConfig{DefaultAgent: "exec"})
	if err != nil {
		t.Fatal(err)
	}
	d := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	dir, err := taskfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	l := &list{
		id: "l", dir: dir, events: newEventLog(path),
		entries: map[string]*entry{}, waiters: map[string]map[string]struct{}{},
		dirty: map[string]struct{}{}, inReady: map[string]bool{},
		candidates: map[string]struct{}{}, recheck: map[string]time.Time{},
		slots: d.serveSlots("l"),
	}
	t.Cleanup(func() { l.events.close() })
	d.lists["l"], d.order = l, []string{"l"}

	write := func(content string) *taskfile.Task {
		t.Helper()
		if err := os.WriteFile(filepath.Join(path, "1.json"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		task, err := dir.Read("1")
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	// What the job last wrote: the task ended (cancelled).
	stale := write(`{"id": "1", "subject": "child", "status": "pending", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true", "state": "cancelled", "attempt": 1}}}`)
	d.refresh(l, "1")
	e := l.entries["1"]
	j := &job{l: l, id: "1", kind: jobDeliver}
	e.job = j
	// Another writer restarts it while the job is still recording; the
	// loop sees the change, but the task has a job.
	write(`{"id": "1", "subject": "child", "status": "pending", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true", "attempt": 1}}}`)
	d.refresh(l, "1")
	clear(l.candidates)
	l.ready, l.inReady = nil, map[string]bool{}

	d.finished(jobDone{job: j, task: stale})

	if e.state == StateCancelled {
		t.Fatalf("entry state %q: the job's stale report hid the restart", e.state)
	}
	_, considered := l.candidates["1"]
	if !considered && !l.inReady["1"] {
		t.Errorf("the restarted task is neither a candidate nor ready (state %q)", e.state)
	}
}
