package taskfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
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
	data, checked, rerr := readIdentified(path, nil)
	if errors.Is(rerr, fs.ErrNotExist) {
		unlock()
		return rerr
	}
	var t *Task
	if rerr == nil {
		t, rerr = Parse(data, path, id)
	}
	if rerr != nil {
		t = nil
	}
	if err := check(t, rerr); err != nil {
		unlock()
		return err
	}
	d.callHook(&replaceHooks, id)
	err = d.takeOut(path, id, checked)
	unlock()
	if err != nil {
		return fmt.Errorf("remove task %s: %w", id, err)
	}
	return syncerFor(d.path).sync()
}

// takeOut removes the task file at path, if it is the file checked (a
// zero checked: whatever file is there). The file is first renamed to a
// temporary name, where it is looked at: a file a writer that takes no
// lock put in the task file's place since the check (a person's mv of an
// edited copy) goes back, and nothing is removed. A file already gone is
// not an error.
func (d *Dir) takeOut(path, id string, checked fileID) error {
	if checked == (fileID{}) {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	aside := filepath.Join(d.path, "."+id+".json"+strconv.FormatUint(rand.Uint64(), 10))
	if err := os.Rename(path, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(aside, &st); err != nil {
		return nil // removed meanwhile by someone else
	}
	if (fileID{uint64(st.Dev), st.Ino}) == checked {
		return os.Remove(aside)
	}
	if err := putBack(aside, path); err != nil {
		return fmt.Errorf("another file was put in its place meanwhile and a third after it; the second is kept as %s: %w", aside, err)
	}
	return fmt.Errorf("another file was put in its place meanwhile: it is kept, and nothing was removed")
}

// putBack renames aside to path unless a file is at path.
func putBack(aside, path string) error {
	err := renameNoReplace(unix.AT_FDCWD, aside, unix.AT_FDCWD, path)
	if err != nil && !errors.Is(err, fs.ErrExist) && !errors.Is(err, fs.ErrNotExist) {
		// No such rename here: a link fails where a file is, as it does.
		if err = os.Link(aside, path); err == nil {
			return os.Remove(aside)
		}
	}
	return err
}
