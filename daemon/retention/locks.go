package retention

import (
	"errors"
	"strconv"
	"strings"
	"syscall"

	"github.com/taskd/taskd/internal/fsroot"
)

// LocksDir is where a daemon keeps lock directories for reuse, relative to
// the list (package taskfile, KeepLockDirs). Each is named PID.N after the
// process that made it.
const LocksDir = ".taskd/locks"

// PlanLocks lists the kept lock directories of the list at listDir made by
// processes that no longer run. A daemon adopts those it finds when it
// starts, so they only pile up while none runs; removing one a daemon has
// adopted is safe (it makes another when it needs one).
func PlanLocks(listDir string) ([]Removal, error) {
	names, err := dirNames(listDir, LocksDir)
	if err != nil {
		return nil, err
	}
	var out []Removal
	for _, name := range names {
		pidText, _, ok := strings.Cut(name, ".")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || alive(pid) {
			continue
		}
		if inside, err := fsroot.ReadDir(listDir, LocksDir+"/"+name); err != nil || len(inside) > 0 {
			continue // a lock directory holds nothing: this one is not taskd's
		}
		out = append(out, Removal{Path: LocksDir + "/" + name, Why: "lock directory kept by process " + pidText + ", which is gone"})
	}
	return out, nil
}

// alive reports whether process pid exists (it may be another user's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
