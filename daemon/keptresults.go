package daemon

import (
	"errors"
	"io/fs"
	"os"

	"github.com/taskd/taskd/daemon/agent"
)

// A result kept in the runtime directory while its run folder could not
// take it (agent/kept.go) waits there for its attempt's end to be
// recorded. A task whose file is gone — taskd rm --force, a person's rm,
// its whole list removed — will have no end recorded: what was kept for
// it is removed once no job of it runs (a job stopped by the removal may
// keep its agent's result as it ends), and a daemon starting removes what
// was kept for tasks whose files, or whole lists, went while none ran
// (agent.ForgetRemovedLists). Nothing of a
// removed task is left to be taken for the end of a task made later with
// its id.

// forgetKept removes the results kept for task id of l, whose file is
// gone and whose job, if it had one, has ended.
func (d *Daemon) forgetKept(l *list, id string) {
	if err := agent.ForgetTask(l.Dir.Path(), id); err != nil {
		d.log.Warn("task file removed", "list", l.ID, "task", id, "err", err)
	}
}

// sweepKept removes the results kept for tasks of l whose files are gone.
func (d *Daemon) sweepKept(l *list) {
	for _, id := range agent.KeptTasks(l.Dir.Path()) {
		if _, err := os.Lstat(l.Dir.File(id)); errors.Is(err, fs.ErrNotExist) {
			d.forgetKept(l, id)
		}
	}
}
