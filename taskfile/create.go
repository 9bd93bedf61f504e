package taskfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
)

// highWatermarkName is Claude Code's record of the last id it handed out.
const highWatermarkName = ".highwatermark"

// Create writes t as a new task file and returns it as stored. If t.ID is
// empty an id is allocated as Claude Code allocates one: one more than the
// largest of .highwatermark and every numeric id in the list, with
// .highwatermark updated, all under the list lock that Claude Code takes for
// the same purpose (<dir>/.lock, held with proper-lockfile's protocol) and
// taskd's flock on that file. If t.ID is set, that id is used and Create fails
// with an error satisfying errors.Is(err, fs.ErrExist) when the file exists.
// An existing file is never replaced.
func (d *Dir) Create(ctx context.Context, t *Task) (*Task, error) {
	if t.ID != "" && !ValidID(t.ID) {
		return nil, &fs.PathError{Op: "create", Path: d.File(t.ID), Err: ErrInvalidID}
	}
	unlock, err := d.lockList(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	unlockList, err := d.lockFile(ctx, filepath.Join(d.path, listLockName))
	if err != nil {
		return nil, err
	}
	defer unlockList()

	t = t.Clone()
	if t.Blocks == nil {
		t.Blocks = []string{}
	}
	if t.BlockedBy == nil {
		t.BlockedBy = []string{}
	}
	if t.Status == "" {
		t.Status = StatusPending
	}
	if t.ID != "" {
		if err := d.store(t, d.File(t.ID)); err != nil {
			return nil, err
		}
		if n, err := strconv.ParseUint(t.ID, 10, 63); err == nil {
			if err := d.raiseHighWatermark(n); err != nil {
				return nil, err
			}
		}
		return t, nil
	}
	next, err := d.nextID()
	if err != nil {
		return nil, err
	}
	for ; ; next++ {
		t.ID = strconv.FormatUint(next, 10)
		err := d.store(t, d.File(t.ID))
		if errors.Is(err, fs.ErrExist) {
			continue // written meanwhile by someone who ignores the lock
		}
		if err != nil {
			return nil, err
		}
		break
	}
	if err := d.raiseHighWatermark(next); err != nil {
		return nil, err
	}
	return t, nil
}

// store writes t as the new file path, which must not exist.
func (d *Dir) store(t *Task, path string) error {
	out, data := t.encode()
	if err := writeFile(d.path, path, data, true); err != nil {
		return err
	}
	t.doc, t.raw = out, data
	return nil
}

// nextID returns one more than the largest of .highwatermark and every
// numeric task id in the directory. The caller holds the list lock.
func (d *Dir) nextID() (uint64, error) {
	hw, err := d.highWatermark()
	if err != nil {
		return 0, err
	}
	f, err := fsroot.OpenDirectory(d.path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, &fs.PathError{Op: "list", Path: d.path, Err: err}
	}
	for _, n := range names {
		if s, ok := strings.CutSuffix(n, ".json"); ok {
			if v, err := strconv.ParseUint(s, 10, 63); err == nil && v > hw {
				hw = v
			}
		}
	}
	return hw + 1, nil
}

// highWatermark reads .highwatermark; like Claude Code it treats a missing
// or unparsable file as 0. What is not a regular file (a FIFO) is refused:
// no id is given while it is there.
func (d *Dir) highWatermark() (uint64, error) {
	data, err := fsroot.ReadRegular(filepath.Join(d.path, highWatermarkName))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(data))
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	v, err := strconv.ParseUint(s[:end], 10, 63)
	if err != nil {
		return 0, nil
	}
	return v, nil
}

// raiseHighWatermark records n in .highwatermark unless it already holds a
// larger value. The caller holds the list lock.
func (d *Dir) raiseHighWatermark(n uint64) error {
	hw, err := d.highWatermark()
	if err != nil || hw >= n {
		return err
	}
	path := filepath.Join(d.path, highWatermarkName)
	return writeFile(d.path, path, []byte(strconv.FormatUint(n, 10)), false)
}

// tempName matches the temporary files writeFile leaves behind when the
// process dies between creating and renaming them.
var tempName = regexp.MustCompile(`^\.([A-Za-z0-9_-]{1,128}\.json|\.highwatermark)[0-9]+$`)

// Sweep removes what a crashed writer can leave in the directory: temporary
// files older than age, and Claude Code-style lock directories of task files
// (<id>.json.lock) whose holder stopped refreshing them (older than the
// 10 s stale limit, exactly when proper-lockfile would remove them too). It
// returns the names removed. Nothing else is touched.
func (d *Dir) Sweep(age time.Duration) ([]string, error) {
	now := time.Now()
	return d.sweep(now.Add(-age), now.Add(-lockStale))
}

// sweep removes the temporary files last changed before temps and the
// lock directories last refreshed before locks. A temporary file's age is
// that of its last change of name as well as of its contents: after a
// write's exchange the temporary name holds the task file's old contents,
// with their old modification time, until the writer has checked them and
// unlinked or put them back — a file another process moved into place may
// be among them. The exchange sets the inode's change time, so that file is
// as young as the exchange.
func (d *Dir) sweep(temps, locks time.Time) ([]string, error) {
	entries, err := fsroot.ReadDirectory(d.path)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		isTemp := tempName.MatchString(name) && e.Type().IsRegular()
		isLock := e.IsDir() && strings.HasSuffix(name, ".json.lock")
		if !isTemp && !isLock {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if isLock && !fi.ModTime().Before(locks) {
			continue
		}
		if isTemp && !lastChange(fi).Before(temps) {
			continue
		}
		if err := os.Remove(filepath.Join(d.path, name)); err == nil {
			removed = append(removed, name)
		}
	}
	return removed, nil
}
