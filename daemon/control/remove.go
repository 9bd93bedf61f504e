package control

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// ErrActive is returned by Remove for a task that is running or waiting for
// its children, unless forced.
var ErrActive = errors.New("the task is running")

// Remove removes task id from dir: its file, under the locks every writer
// takes, then its run folders and its inbox. A task that runs or waits
// for its children is refused with ErrActive, and a task not addressed to
// taskd (Claude Code's own) with ErrNotTaskd, unless force is set; then
// the daemon, seeing the file gone, stops its agent. A file that does not
// parse is removed too. It returns the bytes the removed files held
// besides the task file.
func Remove(ctx context.Context, dir *taskfile.Dir, id string, force bool) (int64, error) {
	err := dir.Remove(ctx, id, func(t *taskfile.Task, readErr error) error {
		if t == nil || force {
			return nil
		}
		if owned, _ := task.Addressed(t); !owned {
			return fmt.Errorf("task %s: %w: it is Claude Code's to keep; remove it anyway with --force", id, ErrNotTaskd)
		}
		if s := task.Of(t); s.Active() || t.Status == taskfile.StatusInProgress {
			state := string(s)
			if state == "" {
				state = t.Status
			}
			return fmt.Errorf("task %s is %s: %w; cancel it first (taskd cancel), or remove it anyway with --force", id, state, ErrActive)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var total int64
	var errs []error
	for _, p := range []string{area.RunsDir(dir.Path(), id), area.InboxDir(dir.Path(), id)} {
		rel, _ := filepath.Rel(dir.Path(), p)
		n, err := removeSettled(ctx, dir.Path(), rel)
		total += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return total, fmt.Errorf("task %s removed, but not all it left: %w", id, err)
	}
	return total, nil
}

// removeSettled removes rel under root, and again while a directory was
// not empty when it came to it: a forced task's agent, being stopped,
// may still write its last files (result.json) into its run folder. It
// gives up after about ten seconds.
func removeSettled(ctx context.Context, root, rel string) (int64, error) {
	var total int64
	for try := 0; ; try++ {
		n, err := fsroot.RemoveAll(root, rel)
		total += n
		if !errors.Is(err, syscall.ENOTEMPTY) || try == 50 {
			return total, err
		}
		select {
		case <-ctx.Done():
			return total, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}
