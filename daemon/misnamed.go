package daemon

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// A file that looks like a task file but whose name cannot be a task id
// ("a b.json", "täsk.json", "x.JSON"; see taskfile.Misnamed) is never
// read, but it is not ignored in silence either: like a rejected task, it
// gets a note in .taskd/rejected/ and a TaskRejected event (with its file
// name and no task id) that say why and how to rename it, once per file;
// the note goes when the file does.

// noteMisnamed records the misnamed files of l, as a scan found them: a
// note for each new one, and the notes of those gone removed.
func (d *Daemon) noteMisnamed(l *list, names []string) {
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		seen[name] = true
		if l.misnamed[name] {
			continue
		}
		problem, fix, ok := taskfile.Misnamed(name)
		if !ok {
			continue
		}
		if l.misnamed == nil {
			l.misnamed = map[string]bool{}
		}
		l.misnamed[name] = true
		d.writeRejection(l, "", name, problem, fix)
	}
	for name := range l.misnamed {
		if !seen[name] {
			delete(l.misnamed, name)
			fsroot.Remove(l.Dir.Path(), rejectNote(l, noteName(name)))
		}
	}
}

// checkNames looks for misnamed files in l again (an event named one).
func (d *Daemon) checkNames(l *list) {
	if l.refused != nil {
		return
	}
	_, misnamed, err := l.Dir.Names()
	if err != nil {
		return
	}
	d.noteMisnamed(l, misnamed)
}

// noteName is the name a note on file name is kept under: the name itself,
// unless the note's name would be too long for the file system.
func noteName(name string) string {
	if len(name)+len(".txt") <= fsroot.MaxName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:200] + "-" + hex.EncodeToString(sum[:8])
}
