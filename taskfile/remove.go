package taskfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Remove removes the file of task id under the same locks as Update, if
// check, called on the task as read under them, returns nil; otherwise it
// returns check's error and removes nothing. A file that does not parse is
// passed to check as nil with the error of its read, so that the caller
// decides whether to remove it anyway. The removal is durable (the
// directory fsynced) when Remove returns.
func (d *Dir) Remove(ctx context.Context, id string, check func(t *Task, readErr error) error) error {
	path := d.File(id)
	if !ValidID(id) {
		return &fs.PathError{Op: "remove", Path: path, Err: ErrInvalidID}
	}
	unlockFile, err := d.lockFile(ctx, path)
	if err != nil {
		return err
	}
	defer unlockFile()
	unlock, err := d.lockList(ctx)
	if err != nil {
		return err
	}
	t, rerr := readFile(path, id)
	if errors.Is(rerr, fs.ErrNotExist) {
		unlock()
		return rerr
	}
	if rerr != nil {
		t = nil
	}
	if err := check(t, rerr); err != nil {
		unlock()
		return err
	}
	err = os.Remove(path)
	unlock()
	if err != nil {
		return fmt.Errorf("remove task %s: %w", id, err)
	}
	return syncerFor(d.path).sync()
}
