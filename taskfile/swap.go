package taskfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// ErrChanged is returned by Swap when the file no longer holds the bytes
// the caller expected: another writer changed it.
var ErrChanged = errors.New("task file changed")

// Swap replaces the bytes of task id with new, if and only if the file
// still holds old, under the same locks as Update and as durably (the
// directory is fsynced). It is a compare-and-swap on the whole file: the
// way to take back a write exactly, such as a claim whose attempt never
// started, without touching what another writer may have written since.
// It returns an error wrapping ErrChanged if the file holds other bytes,
// and one wrapping fs.ErrNotExist if it is gone; new is written as given
// (it must be a task file the caller read, not built).
func (d *Dir) Swap(ctx context.Context, id string, old, new []byte) error {
	path := d.File(id)
	if !ValidID(id) {
		return &fs.PathError{Op: "swap", Path: path, Err: ErrInvalidID}
	}
	tmp, err := prepareFile(d.path, path, new)
	if err != nil {
		return err
	}
	defer tmp.Cleanup()
	if d.own != nil {
		tmp.stat()
	}
	replaced, err := d.replaceIfUnchanged(ctx, id, tmp, new, old)
	if err != nil {
		return err
	}
	if !replaced {
		return fmt.Errorf("swap task %s: %w", id, ErrChanged)
	}
	return syncerFor(d.path).sync()
}
