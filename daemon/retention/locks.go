package retention

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"syscall"

	"github.com/taskd/taskd/internal/fsroot"
)

// LocksDir is where a daemon keeps lock directories for reuse, and
// FilesDir the files its writes replaced, relative to the list (package
// taskfile, KeepLockDirs). Each is named PID.N after the process that put
// it there.
const (
	LocksDir = ".taskd/locks"
	FilesDir = ".taskd/files"
)

// PlanLocks lists the kept lock directories of the list at listDir made
// by processes that no longer run. A daemon adopts those it finds when it
// starts, so they only pile up while none runs; removing one a daemon has
// adopted is safe (it makes another when it needs one).
func PlanLocks(listDir string) ([]Removal, error) {
	return planKept(listDir, LocksDir, "lock directory")
}

// PlanKeptFiles lists the kept files of the list at listDir put there by
// processes that no longer run: for taskd clean. A daemon does not remove
// them but adopts them, at its first write of the list (removing them
// would free space on a full disk for a write the disk could not take a
// moment before).
func PlanKeptFiles(listDir string) ([]Removal, error) {
	return planKept(listDir, FilesDir, "replaced task file")
}

// planKept lists the entries of the pool rel (of lock directories, or of
// files) of the list at listDir that processes no longer running put
// there: for lock directories, empty directories only; for files, regular
// files only.
func planKept(listDir, rel, what string) ([]Removal, error) {
	entries, err := fsroot.ReadDir(listDir, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dirs := rel == LocksDir
	var out []Removal
	for _, e := range entries {
		name := e.Name()
		pidText, _, ok := strings.Cut(name, ".")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || alive(pid) || e.IsDir() != dirs || !dirs && !e.Type().IsRegular() {
			continue
		}
		if inside, err := fsroot.ReadDir(listDir, rel+"/"+name); dirs && (err != nil || len(inside) > 0) {
			continue // a lock directory holds nothing: this one is not taskd's
		}
		out = append(out, Removal{Path: rel + "/" + name, Why: what + " kept by process " + pidText + ", which is gone"})
	}
	return out, nil
}

// alive reports whether process pid exists (it may be another user's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
