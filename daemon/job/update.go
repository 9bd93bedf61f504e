package job

import (
	"context"
	"errors"

	"github.com/taskd/taskd/taskfile"
)

// update is Dir.Update of the job's task. After a write of the job's own
// it starts from the bytes that write left instead of reading the file
// again: a file changed since is found under the locks, as any other
// writer's change is, and the update starts over from the file. fn
// failing on those bytes is asked again of the file as it is, so that
// what fn refuses is always what the file says. A running mark the job
// still owes (startmark.go) is made in the same write, before fn.
func (j *Job) update(ctx context.Context, fn func(*taskfile.Task) error, opts ...taskfile.WriteOption) (*taskfile.Task, error) {
	j.writing.Lock()
	defer j.writing.Unlock()
	m := j.mark.Load()
	if m != nil {
		// The running mark the job still owes goes in this write, first.
		inner := fn
		fn = func(t *taskfile.Task) error {
			m.apply(t)
			return inner(t)
		}
	}
	var t *taskfile.Task
	err := errNotWritten
	if last := j.wrote.Load(); last != nil && last.ID == j.ID {
		t, err = j.List.Dir.UpdateFrom(ctx, last, fn, opts...)
	}
	if err != nil && !Retryable(err) && ctx.Err() == nil {
		t, err = j.List.Dir.Update(ctx, j.ID, fn, opts...)
	}
	j.remember(t, err)
	if m != nil && err == nil {
		j.settleMark(m)
	}
	return t, err
}

// errNotWritten says the job has not written its task yet.
var errNotWritten = errors.New("not written by the job")

// remember keeps t, the task as a write of the job left it, for the job's
// next write; after a failed write the file is read again.
func (j *Job) remember(t *taskfile.Task, err error) {
	if err != nil || t == nil {
		j.wrote.Store(nil)
		return
	}
	j.wrote.Store(t)
}
