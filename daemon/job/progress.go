package job

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// ProgressInterval is the least time between two writes of an attempt's
// progress (metadata.taskd.progress) into its task file: a streaming
// agent reports on every line, the file gets the latest report at most
// this often.
const ProgressInterval = 3 * time.Second

// progressWriter is a running attempt's agent.Reporter: it writes the
// latest progress reported into the job's task file, the first at once,
// then at most every ProgressInterval, from a timer's goroutine. It is
// closed before the attempt's end is recorded: close waits for a write
// under way and drops what is left, so no progress write lands after
// the end (which records the final progress itself). A write only goes
// to a file that still says the task runs.
type progressWriter struct {
	j  *Job
	mu sync.Mutex
	// latest is the report not yet written; scheduled, a write is due
	// (timer set); last, when the last write began.
	latest    *agent.Progress
	timer     *time.Timer
	scheduled bool
	closed    bool
	last      time.Time
	writes    sync.WaitGroup
}

func (w *progressWriter) Progress(p agent.Progress) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.latest = &p
	if w.scheduled {
		return // the write due takes the latest report
	}
	w.scheduled = true
	w.writes.Add(1)
	w.timer = time.AfterFunc(max(time.Until(w.last.Add(ProgressInterval)), 0), w.flush)
}

// flush writes the latest report.
func (w *progressWriter) flush() {
	defer w.writes.Done()
	w.mu.Lock()
	p := w.latest
	w.latest, w.scheduled = nil, false
	if w.closed || p == nil {
		w.mu.Unlock()
		return
	}
	w.last = time.Now()
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	_, err := w.j.List.Dir.Update(ctx, w.j.ID, func(t *taskfile.Task) error {
		if task.Of(t) != task.Running {
			return errNotRunning
		}
		task.Change(t, func(r *task.Record) { r.Progress = task.Object(asValue(p)) })
		return nil
	}, taskfile.NoDirSync)
	if err != nil && !errors.Is(err, errNotRunning) {
		w.j.Log.Debug("write progress", "list", w.j.List.ID, "task", w.j.ID, "err", err)
	}
}

// close stops the writer: a write due is dropped, one under way is
// waited for.
func (w *progressWriter) close() {
	w.mu.Lock()
	w.closed = true
	if w.scheduled && w.timer.Stop() {
		w.scheduled = false
		w.writes.Done() // the write that will not run
	}
	w.mu.Unlock()
	w.writes.Wait()
}

var errNotRunning = errors.New("the task no longer runs")
