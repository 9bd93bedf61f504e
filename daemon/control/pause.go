package control

import (
	"context"
	"errors"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// errNotPaused leaves a task that a lifted pause does not concern as it is.
var errNotPaused = errors.New("not paused by that profile")

// EndPause makes task id, if a usage limit of profile paused it, due at
// now: its retryAt and the end of its pause (metadata.taskd.pause.until)
// become now, so that a daemon resumes it (its session, for claude) as
// soon as it looks, and does not take the pause up again from the file.
// It reports whether the task was such a task.
func EndPause(ctx context.Context, dir *taskfile.Dir, id, profile string, now time.Time) (bool, error) {
	_, err := dir.Update(ctx, id, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		p := rec.Pause
		if rec.State != task.Paused || p == nil {
			return errNotPaused
		}
		if prof, _ := p.String("profile"); prof != profile {
			return errNotPaused
		}
		p.Set("until", task.Stamp(now))
		rec.RetryAt = now
		task.Store(t, rec)
		return nil
	})
	if errors.Is(err, errNotPaused) {
		return false, nil
	}
	return err == nil, err
}
