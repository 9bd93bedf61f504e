// Package area is the layout of a list's .taskd directory, taskd's own
// files beside the task files: run folders, inboxes, rejection notes, the
// event log, the list's workflows and command files. It builds every path
// taskd makes there, and Check says whether the area is safe to use: no
// link among its entries, the daemon's user its owner. Files in it are
// made and read through package fsroot, so nothing a task file names, and
// no link found there, can lead a write out of the list.
package area

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// Name is the area's directory, relative to its list.
const Name = ".taskd"

// areaEntries are the area's well-known entries: none may be a link, and
// each is a directory but events.jsonl, a regular file.
var areaEntries = []string{"events.jsonl", "runs", "inbox", "rejected", "locks", "workflows", "commands", "worktrees"}

// listFiles are the files of Claude Code's beside the task files that
// taskd opens: each must be a regular file, if it is there.
var listFiles = []string{".lock", ".highwatermark"}

// Check returns nil when the area of the list at listDir is safe to
// use: .taskd, if present, is a directory of the daemon's user, none of
// its well-known entries is a symbolic link, and each is what taskd
// opens it as (a directory, events.jsonl a regular file: a FIFO there
// would stop the daemon, which never waits on a file); so are the list's
// .lock and .highwatermark. Otherwise it returns an *fsroot.UnsafeError
// that names the path and the fix.
func Check(listDir string) error {
	for _, name := range listFiles {
		if err := wantKind(filepath.Join(listDir, name), false); err != nil {
			return err
		}
	}
	area := filepath.Join(listDir, Name)
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
		if err := wantKind(p, name != "events.jsonl"); err != nil {
			return err
		}
	}
	return nil
}

// wantKind returns nil if nothing is at path, or what is there is a
// directory (dir) or a regular file (else); otherwise an
// *fsroot.UnsafeError saying what it is and how to remove it.
func wantKind(path string, dir bool) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 || fi.IsDir() == dir && (dir || fi.Mode().IsRegular()) {
		return nil // a link is Check's, an error the opener's
	}
	want, fix := "a regular file", "rm "+path+" (taskd, or Claude Code, makes a new one)"
	if dir {
		want, fix = "a directory", "rm "+path+" (taskd makes the directory)"
	}
	problem := fsroot.KindOf(fi.Mode()) + ", not " + want
	return &fsroot.UnsafeError{Path: path, Kind: fsroot.ErrNotRegular, Problem: problem,
		Why: "taskd opens it as " + want + ", and never waits on a file that is not one", Fix: fix}
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

// Make makes the area of the list at listDir if it is missing, and
// makes it private (0700) if it is the daemon's and was not.
func Make(listDir string) error {
	if err := fsroot.MkdirAll(listDir, Name); err != nil {
		return err
	}
	fi, err := os.Lstat(filepath.Join(listDir, Name))
	if err == nil && fi.IsDir() && fi.Mode().Perm() != fsroot.DirMode && fsroot.Owned(fi) {
		return os.Chmod(filepath.Join(listDir, Name), fsroot.DirMode)
	}
	return err
}

// CheckList is the rule a list must pass to be served: its name is a list
// id (one to 128 of A-Z a-z 0-9 _ -, as Claude Code's session ids and team
// names are), its directory is the daemon's user's and others cannot
// write to it (unless insecure), and its area is safe (always).
func CheckList(path string, insecure bool) error {
	if name := filepath.Base(path); !taskfile.ValidID(name) {
		return &fsroot.UnsafeError{Path: path, Kind: ErrListName,
			Problem: "a directory whose name is not a list id",
			Why:     "a list's id becomes part of paths and commands (LIST/ID), so it is one to 128 of A-Z a-z 0-9 _ -",
			Fix:     "mv " + path + " " + filepath.Join(filepath.Dir(path), suggestName(name))}
	}
	if !insecure {
		if err := fsroot.CheckPrivate(path); err != nil {
			return err
		}
	}
	return Check(path)
}

// ErrListName is the kind of the refusal of a list whose name is not a
// list id.
var ErrListName = errors.New("not a list id")

// suggestName is name with every character a list id cannot hold replaced
// by _, cut to 128 bytes.
func suggestName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 128 {
		b = b[:128]
	}
	if len(b) == 0 {
		return "list"
	}
	return string(b)
}
