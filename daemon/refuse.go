package daemon

import (
	"errors"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/internal/fsroot"
)

// A list's area is <list>/.taskd: taskd's own files, made and read through
// package fsroot, so that nothing a task file names, and no link found
// there, can lead a write out of the list. The area and everything made in
// it are private to the daemon's user (0700 directories, 0600 files).

// rejectPath is the note explaining why task id of l was refused.
func rejectPath(l *list, id string) string { return rejectNote(l, id+".json") }

// rejectNote is the note explaining why the file called name in l was
// refused.
func rejectNote(l *list, name string) string {
	return area.RejectNote(l.Dir.Path(), name)
}

// listRefused logs and records (as a ListRefused event, where the list's
// event log can still be written) that list l is not served, for err.
//
// A list that is another user's, or whose .taskd is not taskd's to write,
// gets nothing written into it (its event log is muted until it is served
// again): the log, taskd status and taskd doctor say why.
func (d *Daemon) listRefused(l *list, err error, msg string) {
	d.log.Error(msg, "list", l.ID, "err", err)
	if errors.Is(err, fsroot.ErrNotOwned) || errors.Is(err, fsroot.ErrLink) {
		l.Events.Mute(true)
		return
	}
	data := map[string]any{"error": err.Error()}
	var u *fsroot.UnsafeError
	if errors.As(err, &u) {
		data["fix"] = u.Fix
	}
	l.Events.Append(eventlog.Event{Type: eventlog.ListRefused, List: l.ID, Data: data})
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
