package subagent

import (
	"path/filepath"

	"github.com/taskd/taskd/daemon/eventlog"
)

// AppendEvent appends one event to the log of the list at listDir. It is
// what taskd commands other than the daemon use. An event of a child that
// its parent monitors through a handoff is mirrored into the parent's
// stream, as the daemon mirrors the events it logs (cliMirror).
func AppendEvent(listDir string, ev eventlog.Event) error {
	l := eventlog.New(listDir)
	defer l.Close()
	if ev.List == "" {
		ev.List = filepath.Base(listDir)
	}
	if m, ok := cliMonitor(listDir, ev); ok {
		a := &Mirror{monitors: map[string]Link{ev.Task: m}}
		tap := func(ev eventlog.Event) { a.mirror(l, ev) }
		l.SetTap(tap)
	}
	return l.Append(ev)
}
