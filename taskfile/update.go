package taskfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// A WriteOption changes how Update makes a write durable.
type WriteOption int

const (
	// NoDirSync skips the fsync of the directory after the rename. The new
	// contents are still written to a temporary file and fsynced before they
	// replace the old file, so the file is never torn or empty; but after a
	// power loss (not a crash: the kernel keeps the rename) the previous
	// version of the file may reappear. Use it only for a change whose
	// previous version is a safe state to fall back to, such as marking a
	// task running that a restart would run again anyway.
	NoDirSync WriteOption = 1 << iota
	// DeferDirSync puts off the fsync of the directory after the rename
	// until the writer needs the write durable: Dir.Sync of the task the
	// write returned waits for it, unless an fsync of the directory made
	// meanwhile by any writer (concurrent claims, the end of another
	// attempt) has covered it already. So writes made close together,
	// each by its own writer, share one fsync of the directory without
	// waiting for each other. Until then the write is as NoDirSync's: the
	// file is never torn or empty, but after a power loss its previous
	// version may reappear; the writer must not act on the write (start
	// anything a restart could not take back) before Sync returns.
	DeferDirSync
)

// maxRetries bounds how often Update starts over because another writer
// changed the file between its read and its write.
const maxRetries = 1000

// Update performs a read-modify-write of task id that no other writer using
// this package or Claude Code's lock protocol can interleave with:
//
//  1. read the file (no lock: files are only ever replaced whole),
//  2. call fn on the task; if the encoded task is unchanged, stop,
//  3. write the new contents to a temporary file in the directory and
//     fsync it (no lock held: this is the slow part, done in parallel with
//     other writers),
//  4. take Claude Code's lock on the task file (<id>.json.lock), then the
//     in-process mutex and the flock on <dir>/.lock, check that the file
//     still holds the bytes read in step 1 and put the temporary file in
//     its place (exchanged with it, so that a file removed meanwhile by a
//     writer that takes no lock stays removed: replaceExisting), then
//     release the locks,
//  5. fsync the directory, shared with concurrent writers of the same
//     directory (group commit), unless NoDirSync is given.
//
// If another writer changed the file in between, the temporary file is
// discarded and Update starts over from step 1, so fn may be called more
// than once and must depend only on the task it is given. If fn returns an
// error nothing is written and Update returns that error. Waiting for locks
// ends with ctx. On success Update returns the task as now stored.
func (d *Dir) Update(ctx context.Context, id string, fn func(*Task) error, opts ...WriteOption) (*Task, error) {
	return d.update(ctx, id, nil, fn, opts)
}

// UpdateFrom is Update of the task seen, starting from its bytes as its
// caller read them instead of reading the file again. A file changed since
// is found in step 4, under the locks, as a change by any other writer
// is, and the update starts over from the file; seen itself is not
// changed.
func (d *Dir) UpdateFrom(ctx context.Context, seen *Task, fn func(*Task) error, opts ...WriteOption) (*Task, error) {
	return d.update(ctx, seen.ID, seen.raw, fn, opts)
}

// update is Update, its first round starting from the bytes seen when
// they are given.
func (d *Dir) update(ctx context.Context, id string, seen []byte, fn func(*Task) error, opts []WriteOption) (*Task, error) {
	path := d.File(id)
	if !ValidID(id) {
		return nil, &fs.PathError{Op: "update", Path: path, Err: ErrInvalidID}
	}
	var opt WriteOption
	for _, o := range opts {
		opt |= o
	}
	for range maxRetries {
		var t *Task
		var err error
		fromSeen := seen != nil
		if fromSeen {
			t, err = d.parse(seen, path, id)
			seen = nil
		} else {
			t, err = readFile(path, id)
		}
		if errors.Is(err, ErrInvalidJSON) {
			// Claude Code rewrites task files in place: an unlocked read can
			// catch one half written. Under its lock the file is whole: the
			// round goes on from a read there, and its write is checked and
			// made as any is (replaceIfUnchanged), so that a change since
			// the read, a removal or a file renamed into place by a writer
			// that takes no lock included, is not lost.
			fromSeen = false
			t, err = d.readLocked(ctx, path, id)
		}
		if err != nil {
			return nil, err
		}
		before := t.raw
		if err := fn(t); err != nil {
			return nil, err
		}
		if t.ID != id {
			return nil, fmt.Errorf("update task %s: the update changed the id to %q", id, t.ID)
		}
		out, data := t.encode()
		if bytes.Equal(data, before) {
			if fromSeen {
				continue // nothing to write, if the file is still as seen: read it
			}
			return t, nil
		}
		tmp, err := prepareFile(d.path, path, data)
		if err != nil {
			return nil, err
		}
		if d.own != nil {
			tmp.stat()
		}
		replaced, err := d.replaceIfUnchanged(ctx, id, tmp, data, before)
		tmp.Cleanup() // removes the temporary file unless it was renamed
		if err != nil {
			return nil, err
		}
		if !replaced {
			continue // someone else wrote the file: start over from their version
		}
		unsynced, err := d.dirSync(opt)
		if err != nil {
			return nil, err
		}
		t.doc, t.raw, t.unsynced = out, data, unsynced
		return t, nil
	}
	return nil, fmt.Errorf("update task %s: the file kept changing under %d attempts: %w", id, maxRetries, ErrLocked)
}

// readLocked reads task id's file at path holding its lock and the
// list's, so that no writer that takes them, Claude Code writing the file
// in place included, is halfway through it.
func (d *Dir) readLocked(ctx context.Context, path, id string) (*Task, error) {
	unlockFile, err := d.lockFile(ctx, path)
	if err != nil {
		return nil, err
	}
	defer unlockFile()
	unlock, err := d.lockList(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return readFile(path, id)
}

// dirSync makes a rename just done durable as opt says: an fsync of the
// directory (shared with concurrent writers) before it returns; none
// (NoDirSync); or a request for one, returned to be waited for by Sync
// (DeferDirSync).
func (d *Dir) dirSync(opt WriteOption) (unsynced uint64, err error) {
	switch {
	case opt&NoDirSync != 0:
		return 0, nil
	case opt&DeferDirSync != 0:
		return syncerFor(d.path).request(), nil
	}
	return 0, syncerFor(d.path).sync()
}

// Sync returns once the write that returned t is durable. Only a write
// made with DeferDirSync may not be yet: Sync waits until an fsync of the
// directory that began after its rename has finished, and makes one if
// none is under way. For any other task it returns at once.
func (d *Dir) Sync(t *Task) error {
	if t == nil || t.unsynced == 0 {
		return nil
	}
	return syncerFor(d.path).wait(t.unsynced)
}

// replaceIfUnchanged puts tmp, the new contents data of task id, in place
// of its file, under every lock, if the file still holds want; a file
// removed meanwhile by a writer that takes no lock stays removed
// (replaceExisting), an error satisfying errors.Is(err, fs.ErrNotExist),
// and one it replaced (by a rename) stays in place, reported as a change.
// The write is remembered (Own) before the rename, so that the loop, told
// of the rename at once, finds it.
//
// The task file's own lock (a directory, made and removed: two journal
// operations that can each wait for a commit) is taken first and released
// last, so the list's lock, which every write to the list takes, is held
// only for the read and the rename. Every path takes the two in this
// order.
//
// The file replaced is read through a descriptor kept open until both
// locks are released: its last reference, so that the kernel frees its
// inode then, in the close, and not in the rename. Freeing an inode
// takes a millisecond or more on a busy ext4 without a journal (a rename
// that frees one took ten times as long as one that does not), and in
// the rename every other writer of the list would wait for it too.
func (d *Dir) replaceIfUnchanged(ctx context.Context, id string, tmp *pendingFile, data, want []byte) (bool, error) {
	path := d.File(id)
	old := taskFile{fd: -1}
	defer func() { // after the locks' release, deferred below
		if old.fd >= 0 {
			old.close()
		}
	}()
	unlockFile, err := d.lockFile(ctx, path)
	if err != nil {
		return false, err
	}
	defer unlockFile()
	unlock, err := d.lockList(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	f, err := openTask(path)
	if err != nil {
		return false, err // nothing open (openTask closes what it refuses)
	}
	old = f
	cur, err := readWhole(old, make([]byte, 0, old.size+1))
	if err != nil {
		return false, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if !bytes.Equal(cur, want) {
		return false, nil
	}
	d.callHook(&replaceHooks, id)
	d.remember(id, tmp, data)
	if err := tmp.replaceExisting(); err != nil {
		d.forgetWrite(id, tmp)
		if errors.Is(err, fs.ErrNotExist) {
			d.callHook(&foundNothingHooks, id)
			if _, serr := os.Lstat(path); serr == nil {
				// The file was away for a moment: an editor's save (vim's,
				// by default) renames it away and writes it anew. The
				// update starts over from the file there now.
				return false, nil
			}
		}
		return false, err
	}
	if !tmp.exchangedWith(old) {
		// Between the check and the exchange a writer that takes no lock
		// put another file in the task file's place (a person's mv of an
		// edited copy): it goes back, and the update starts over from it.
		d.forgetWrite(id, tmp)
		tmp.exchangeBack()
		return false, nil
	}
	return true, nil
}
