package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/internal/fsroot"
)

// A result the run folder cannot take is kept elsewhere until the end of
// its attempt is recorded.
//
// result.json is written the moment an agent exits, before the task file
// records the end: a daemon that stops in between finds it and records
// it instead of running the agent again. When the run folder cannot take
// it (the list's file system is full, failing or read-only), the result
// is kept in taskd's runtime directory (package held: $XDG_RUNTIME_DIR/taskd,
// a tmpfs on most systems), at
//
//	results/<list>-<hash of the list's path>/<task>/<attempt>[/<sub>]/result.json
//
// written atomically, private (0700 folders, a 0600 file). ReadResult reads
// it there when the run folder has no result.json; SettleResult, called
// once the end is recorded, moves it into the run folder and removes it.
// Only when the runtime directory cannot take it either does the result
// live in the daemon's memory alone.

// keptRoot is the folder of kept results, or an error if there is no
// runtime directory.
var keptRoot = sync.OnceValues(func() (string, error) {
	dir, err := held.RuntimeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "results"), nil
})

// keptHere is set once this process keeps a result (writeKept).
var keptHere atomic.Bool

// keptLists holds, for each list directory looked at, whether its folder
// of kept results existed when this process first looked: results
// earlier processes kept for it.
var keptLists = new(sync.Map)

// mayBeKept reports whether a result may be kept for a run folder of the
// list directory listDir: one an earlier process left for the list, or
// one this process kept. While none may be, forgetting or settling a kept
// result looks at nothing: the common case, a run folder that takes its
// result, costs no system call in the runtime directory per attempt (one
// per list, the first time).
func mayBeKept(listDir string) bool {
	if keptHere.Load() {
		return true
	}
	if v, ok := keptLists.Load(listDir); ok {
		return v.(bool)
	}
	dir, err := keptListDir(listDir)
	if err != nil {
		return false // nowhere to keep anything
	}
	_, err = os.Lstat(dir)
	found := !errors.Is(err, fs.ErrNotExist)
	keptLists.Store(listDir, found)
	return found
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// keptDir returns the folder where the result of the run folder runDir is
// kept, and the list directory runDir is in.
func keptDir(runDir string) (dir, listDir string, err error) {
	sep := string(filepath.Separator)
	marker := sep + area.Name + sep + "runs" + sep
	i := strings.LastIndex(runDir, marker)
	if i <= 0 {
		return "", "", fmt.Errorf("%s is not a run folder", runDir)
	}
	listDir, rel := runDir[:i], runDir[i+len(marker):]
	parts := strings.Split(rel, sep)
	if len(parts) < 2 || slices.ContainsFunc(parts, notPlain) {
		return "", "", fmt.Errorf("%s is not a run folder", runDir)
	}
	listKept, err := keptListDir(listDir)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(append([]string{listKept}, parts...)...), listDir, nil
}

// keptListDir returns the folder of the results kept for the list
// directory listDir.
func keptListDir(listDir string) (string, error) {
	root, err := keptRoot()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(listDir))
	name := hex.EncodeToString(sum[:8])
	if base := filepath.Base(listDir); !notPlain(base) {
		name = base + "-" + name
	}
	return filepath.Join(root, name), nil
}

// notPlain reports whether a path element is not a plain name: one that
// cannot lead anywhere but where it is put.
func notPlain(name string) bool {
	return !plainName.MatchString(name) || name == "." || name == ".."
}

// WriteResult writes res as the result.json of the run folder runDir of
// the list directory listDir. When the run folder cannot take it, the
// result is kept in the runtime directory (see above), and kept says
// where; err is the run folder's error (joined with the runtime
// directory's if the result could not be kept either).
func WriteResult(listDir, runDir string, res Result) (kept string, err error) {
	return writeResultIn(nil, listDir, runDir, res)
}

// writeResultIn is WriteResult through folder, the run folder runDir
// open, when it is not nil: the folder is not looked for again from the
// list directory. A folder removed since it was opened cannot take the
// result, which is then kept.
func writeResultIn(folder *fsroot.Dir, listDir, runDir string, res Result) (kept string, err error) {
	data, err := jsonRecord(res)
	if err != nil {
		return "", err
	}
	if folder != nil {
		err = folder.WriteFile("result.json", data)
	} else {
		err = fsroot.WriteFile(listDir, filepath.Join(runDir, "result.json"), data)
	}
	if err == nil {
		return "", nil
	}
	dir, _, kerr := keptDir(runDir)
	if kerr == nil {
		kerr = writeKept(dir, data)
	}
	if kerr != nil {
		return "", errors.Join(err, fmt.Errorf("keep the result elsewhere: %w", kerr))
	}
	return filepath.Join(dir, "result.json"), err
}

// writeKept replaces dir/result.json with data, making dir (private) if
// need be, through a temporary file, synced: the result exists nowhere
// else.
func writeKept(dir string, data []byte) error {
	keptHere.Store(true) // before it exists: SettleResult must look from now on
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return held.WriteFile(filepath.Join(dir, "result.json"), data)
}

// readKept returns the result kept for the run folder runDir, if any.
func readKept(runDir string) ([]byte, error) {
	dir, _, err := keptDir(runDir)
	if err != nil {
		return nil, err
	}
	f, err := fsroot.OpenRegular(filepath.Join(dir, "result.json"), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 16<<20))
}

// KeptResult returns where the result of the run folder runDir is kept
// while its run folder cannot take it, whether or not it is there now.
func KeptResult(runDir string) (string, error) {
	dir, _, err := keptDir(runDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "result.json"), nil
}

// ForgetKept removes a result kept for the run folder runDir, left by an
// earlier run of the same attempt number: it is not this attempt's.
func ForgetKept(runDir string) {
	if dir, listDir, err := keptDir(runDir); err == nil && mayBeKept(listDir) {
		syscall.Unlink(filepath.Join(dir, "result.json")) // a file: no rmdir after it, as os.Remove would try
	}
}

// SettleResult is called once the end of the attempt whose run folder is
// runDir is recorded: each result kept for it (its own, its sub-folders')
// is written into the run folder and removed. A run folder that is gone
// takes nothing, and what was kept for it is removed; one that still
// cannot take it leaves it kept, where ReadResult finds it, and the error
// is returned.
func SettleResult(runDir string) error {
	dir, listDir, err := keptDir(runDir)
	if err != nil || !mayBeKept(listDir) {
		return nil // nowhere to keep anything, or nothing kept
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var errs []error
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "result.json" {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		to := filepath.Join(runDir, rel)
		if fi, err := os.Lstat(filepath.Dir(to)); err != nil || !fi.IsDir() {
			return nil // the run folder is gone
		}
		data, err := fsroot.ReadRegular(path)
		if err == nil {
			err = fsroot.WriteFile(listDir, to, data)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		return nil
	})
	if len(errs) > 0 {
		return fmt.Errorf("move the kept result into %s: %w", runDir, errors.Join(errs...))
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	// The task's and the list's folders go once empty.
	root, _ := keptRoot()
	for up := filepath.Dir(dir); len(up) > len(root) && os.Remove(up) == nil; up = filepath.Dir(up) {
	}
	return nil
}

// ForgetTask removes every result kept for task id of the list
// directory listDir (each attempt's, each sub-folder's): its task file is
// gone, and no end of it will be recorded. The list's folder goes once
// empty.
func ForgetTask(listDir, id string) error {
	dir, err := keptListDir(listDir)
	if err != nil || notPlain(id) || !mayBeKept(listDir) {
		return nil // nowhere to keep anything, nothing kept, or no task's name
	}
	if err := os.RemoveAll(filepath.Join(dir, id)); err != nil {
		return fmt.Errorf("remove the results kept for task %s: %w", id, err)
	}
	os.Remove(dir) // fails while another task's result is kept
	return nil
}

// KeptTasks returns the ids of the tasks of the list directory listDir
// a result is kept for.
func KeptTasks(listDir string) []string {
	dir, err := keptListDir(listDir)
	if err != nil || !mayBeKept(listDir) {
		return nil
	}
	f, err := fsroot.OpenDirectory(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	return slices.DeleteFunc(names, notPlain)
}

// ForgetRemovedLists removes the results kept for lists of the root
// directory root that are gone: removed, whole, while no daemon ran, so
// that no end of theirs will be recorded. A folder of kept results is
// another root's (the runtime directory serves every daemon of the user)
// unless its name is the one a list of root with its name would have;
// those are left alone.
func ForgetRemovedLists(root string) error {
	results, err := keptRoot()
	if err != nil {
		return nil // nowhere to keep anything
	}
	f, err := fsroot.OpenDirectory(results)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look at the kept results: %w", err)
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	var errs []error
	for _, name := range names {
		i := strings.LastIndexByte(name, '-')
		if i <= 0 || notPlain(name) {
			continue
		}
		listDir := filepath.Join(root, name[:i])
		if dir, err := keptListDir(listDir); err != nil || dir != filepath.Join(results, name) {
			continue // another root's list
		}
		if _, err := os.Lstat(listDir); !errors.Is(err, fs.ErrNotExist) {
			continue // there (or not to be told): its tasks are looked at one by one
		}
		if err := os.RemoveAll(filepath.Join(results, name)); err != nil {
			errs = append(errs, fmt.Errorf("remove the results kept for the removed list %s: %w", listDir, err))
		}
	}
	return errors.Join(errs...)
}
