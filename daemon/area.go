package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/taskd/taskd/internal/fsroot"
)

// A list's area is <list>/.taskd: taskd's own files, made and read through
// package fsroot, so that nothing a task file names, and no link found
// there, can lead a write out of the list. The area and everything made in
// it are private to the daemon's user (0700 directories, 0600 files).

// areaName is the area's directory, relative to its list.
const areaName = ".taskd"

// areaEntries are the area's well-known entries: none may be a link.
var areaEntries = []string{"events.jsonl", "runs", "inbox", "rejected", "locks", "workflows", "commands"}

// checkArea returns nil when the area of the list at listDir is safe to
// use: .taskd, if present, is a directory of the daemon's user, and none of
// its well-known entries is a symbolic link. Otherwise it returns an
// *fsroot.UnsafeError that names the path and the fix.
func checkArea(listDir string) error {
	area := filepath.Join(listDir, areaName)
	fi, err := os.Lstat(area)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return linkError(area)
	case !fi.IsDir():
		return &fsroot.UnsafeError{Path: area, Kind: fsroot.ErrLink, Problem: "not a directory",
			Why: "taskd keeps its own files there", Fix: "rm " + area + " (taskd makes the directory)"}
	}
	if err := fsroot.CheckOwner(area, fi); err != nil {
		return err
	}
	for _, name := range areaEntries {
		p := filepath.Join(area, name)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			return linkError(p)
		case fi.Mode().IsRegular() && hardLinks(fi) > 1:
			return &fsroot.UnsafeError{Path: p, Kind: fsroot.ErrLink,
				Problem: fmt.Sprintf("a file with %d hard links", hardLinks(fi)),
				Why:     "taskd appends to it, and would change the same file elsewhere",
				Fix:     "mv " + p + " " + p + ".old (taskd starts a new one)"}
		}
	}
	return nil
}

// hardLinks is the number of names of the file fi describes.
func hardLinks(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// linkError is checkArea's refusal of a link at path.
func linkError(path string) error {
	to, _ := os.Readlink(path)
	return &fsroot.UnsafeError{Path: path, Kind: fsroot.ErrLink,
		Problem: fmt.Sprintf("a symbolic link (to %s)", to),
		Why:     "taskd keeps its own files in .taskd and follows no link there, so that nothing it writes can land outside the list",
		Fix:     "rm " + path + " (taskd makes a directory of its own in its place)"}
}

// makeArea makes the area of the list at listDir if it is missing, and
// makes it private (0700) if it is the daemon's and was not.
func makeArea(listDir string) error {
	if err := fsroot.MkdirAll(listDir, areaName); err != nil {
		return err
	}
	fi, err := os.Lstat(filepath.Join(listDir, areaName))
	if err == nil && fi.IsDir() && fi.Mode().Perm() != fsroot.DirMode && fsroot.Owned(fi) {
		return os.Chmod(filepath.Join(listDir, areaName), fsroot.DirMode)
	}
	return err
}

// checkList is the rule a list must pass to be served: its directory is
// the daemon's user's and others cannot write to it (unless insecure), and
// its area is safe (always).
func checkList(path string, insecure bool) error {
	if !insecure {
		if err := checkPrivate(path); err != nil {
			return err
		}
	}
	return checkArea(path)
}

// rejectPath is the note explaining why task id of l was refused.
func rejectPath(l *list, id string) string { return rejectNote(l, id+".json") }

// rejectNote is the note explaining why the file called name in l was
// refused.
func rejectNote(l *list, name string) string {
	return filepath.Join(l.dir.Path(), areaName, "rejected", name+".txt")
}

// listRefused logs and records (as a ListRefused event, where the list's
// event log can still be written) that list l is not served, for err.
//
// A list that is another user's, or whose .taskd is not taskd's to write,
// gets nothing written into it (its event log is muted until it is served
// again): the log, taskd status and taskd doctor say why.
func (d *Daemon) listRefused(l *list, err error, msg string) {
	d.log.Error(msg, "list", l.id, "err", err)
	if errors.Is(err, fsroot.ErrNotOwned) || errors.Is(err, fsroot.ErrLink) {
		l.events.muted.Store(true)
		return
	}
	data := map[string]any{"error": err.Error()}
	var u *fsroot.UnsafeError
	if errors.As(err, &u) {
		data["fix"] = u.Fix
	}
	l.events.append(Event{Type: EvListRefused, List: l.id, Data: data})
}

// refusedPath reports whether err is a refusal of the path rule (a link,
// a hard link, a path outside its list, a name that cannot be one).
func refusedPath(err error) bool {
	for _, kind := range []error{fsroot.ErrLink, fsroot.ErrHardLink, fsroot.ErrEscape, fsroot.ErrBadName} {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}
