package taskfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
)

// Claude Code locks with the npm package proper-lockfile: a lock on FILE is
// the directory FILE.lock, created with mkdir (atomic), kept fresh by
// touching its mtime every stale/2 while held, and considered abandoned once
// its mtime is older than stale (10 s, the package default, which Claude Code
// keeps). It locks <list>/.lock (so the directory <list>/.lock.lock) to
// allocate ids and <list>/<id>.json (so <id>.json.lock) to update a task.
// taskd takes the same locks the same way, so neither side ever writes while
// the other holds them.
const (
	lockStale   = 10 * time.Second
	lockRefresh = lockStale / 2
)

// listLockName is the list's lock file: Claude Code creates it empty and
// locks it with proper-lockfile; taskd also holds a flock(2) on it. It is
// never deleted (deleting a lock file splits waiters across two inodes).
const listLockName = ".lock"

// mutexes holds one in-process mutex per list directory, shared by every Dir
// opened on it, because flock(2) locks held by one process do not exclude
// that process's other goroutines and the race detector cannot see them.
var mutexes sync.Map // cleaned dir path → *sync.Mutex

func dirMutex(path string) *sync.Mutex {
	m, _ := mutexes.LoadOrStore(path, new(sync.Mutex))
	return m.(*sync.Mutex)
}

// lockList takes the in-process mutex and the flock on <dir>/.lock. It waits
// until ctx is done; the returned function releases both. A .lock that is
// not a regular file (a FIFO) fails at once, never waited on.
func (d *Dir) lockList(ctx context.Context) (unlock func(), err error) {
	d.mu.Lock()
	path := filepath.Join(d.path, listLockName)
	if k := d.kept; k != nil {
		unlock, err := k.lock(ctx, path)
		if err != nil {
			d.mu.Unlock()
			return nil, fmt.Errorf("lock list %s: %w", d.path, err)
		}
		return func() {
			unlock()
			d.mu.Unlock()
		}, nil
	}
	fd, err := fsroot.OpenRegularFD(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		d.mu.Unlock()
		return nil, fmt.Errorf("lock list %s: %w", d.path, err)
	}
	if err := fsroot.FlockFD(ctx, fd, path, true); err != nil {
		syscall.Close(fd)
		d.mu.Unlock()
		return nil, fmt.Errorf("lock list %s: %w", d.path, errors.Join(ErrLocked, err))
	}
	return func() {
		syscall.Close(fd) // releases the flock; the file stays
		d.mu.Unlock()
	}, nil
}

// lockFile takes Claude Code's proper-lockfile lock on target: the directory
// target+".lock". It retries with a short backoff until ctx is done (a
// held lock, refreshed by its holder, is waited for however long it is
// held), removes a lock whose mtime is older than the stale limit (its
// holder died), and refreshes the mtime while held. Something else in the
// lock's place (a symbolic link, dangling or not; a file), or an abandoned
// lock that cannot be removed, fails at once with ErrBadLock. The returned function releases the lock.
// A Dir that keeps its lock directories (spares.go) renames one into place
// instead of making it, and back instead of removing it.
func (d *Dir) lockFile(ctx context.Context, target string) (unlock func(), err error) {
	path := target + ".lock"
	delay := time.Millisecond
	again := 0      // tries in a row without a wait
	waited := false // the wait was reported (lockWait)
	for {
		var err error
		release := func() { removeLockDir(path) }
		if s := d.spares; s != nil {
			var name string
			name, err = s.acquire(path)
			release = func() { s.release(path, name) }
		} else {
			err = os.Mkdir(path, 0o700)
		}
		if err == nil {
			return holdLock(path, release), nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err // *fs.PathError naming the lock
		}
		// What is there is looked at, not followed: a link in its place
		// (dangling or not) is no lock anyone holds, and no lock can be
		// taken while it is there.
		fi, serr := os.Lstat(path)
		switch {
		case errors.Is(serr, fs.ErrNotExist):
			if again++; again < 3 {
				continue // released meanwhile
			}
		case serr == nil && !fi.IsDir():
			return nil, &fs.PathError{Op: "lock", Path: path, Err: badLock(fi)}
		case serr == nil && time.Since(fi.ModTime()) > lockStale:
			// Abandoned: remove it and try again at once, as
			// proper-lockfile does. A held lock is refreshed every
			// lockRefresh and never gets here.
			rerr := syscall.Rmdir(path)
			if rerr == nil || errors.Is(rerr, fs.ErrNotExist) {
				continue
			}
			if !errors.Is(rerr, syscall.EINTR) {
				return nil, &fs.PathError{Op: "lock", Path: path, Err: fmt.Errorf("%w: it was abandoned more than %s ago and cannot be removed (%v); remove it", ErrBadLock, lockStale, rerr)}
			}
		}
		again = 0
		if !waited {
			waited = true
			lockWait(ctx, path)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, &fs.PathError{Op: "lock", Path: path, Err: errors.Join(ErrLocked, ctx.Err())}
		case <-t.C:
		}
		if delay < 100*time.Millisecond {
			delay *= 2
		}
	}
}

// badLock is the error for a lock path that holds something other than a
// lock directory.
func badLock(fi fs.FileInfo) error {
	what := fsroot.KindOf(fi.Mode())
	return fmt.Errorf("%w: it is %s; no writer can take the lock while it is there, so remove it", ErrBadLock, what)
}

// holdLock keeps the lock directory at path fresh until the returned
// function releases it (with release).
func holdLock(path string, release func()) func() {
	var mu sync.Mutex
	released := false
	var timer *time.Timer
	var refresh func()
	refresh = func() {
		mu.Lock()
		defer mu.Unlock()
		if released {
			return
		}
		now := time.Now()
		os.Chtimes(path, now, now) // best effort; a failure shows as staleness
		timer = time.AfterFunc(lockRefresh, refresh)
	}
	mu.Lock()
	timer = time.AfterFunc(lockRefresh, refresh)
	mu.Unlock()
	return func() {
		mu.Lock()
		released = true
		timer.Stop()
		mu.Unlock()
		release()
	}
}
