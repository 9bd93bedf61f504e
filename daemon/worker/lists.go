package worker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/internal/fsroot"
)

// listPrefix begins the names of the list directories in the state
// directory's attempts folder (attempts/list-N/list), in which attempts
// have their run folders. No attempt id has a '-'.
const listPrefix = "list-"

// takeList returns a list directory for an attempt's run folder: one an
// ended attempt left empty, or a new one. Making and removing the
// folders of a list directory for every attempt would cost more than
// starting its agent.
func (w *Worker) takeList() (string, error) {
	select {
	case dir := <-w.lists:
		return dir, nil
	default:
	}
	dir := filepath.Join(w.attemptsDir(), listPrefix+strconv.FormatUint(w.listSeq.Add(1), 10), "list")
	return dir, os.MkdirAll(dir, 0o700)
}

// putList removes the run folders of task from list directory dir and
// keeps dir for the next attempt — unless it holds anything else (what an
// agent left there), which goes with it.
func (w *Worker) putList(dir, task string) {
	if _, err := fsroot.RemoveAll(dir, area.RunsDir(dir, task)); err == nil && onlyRuns(dir) {
		select {
		case w.lists <- dir:
			return
		default:
		}
	}
	_ = os.RemoveAll(filepath.Dir(dir))
}

// onlyRuns reports whether list directory dir holds nothing but an empty
// runs folder: .taskd/runs, directories both, or nothing at all.
func onlyRuns(dir string) bool {
	for _, d := range []struct{ path, only string }{{dir, area.Name}, {filepath.Join(dir, area.Name), "runs"}, {filepath.Join(dir, area.Name, "runs"), ""}} {
		entries, err := fsroot.ReadDirectory(d.path)
		if err != nil {
			return false
		}
		switch {
		case len(entries) == 0:
			return true
		case len(entries) > 1 || d.only == "" || entries[0].Name() != d.only || !entries[0].Type().IsDir():
			return false
		}
	}
	return true
}

// isListDir reports whether name, an entry of the attempts folder, is a
// list directory takeList made.
func isListDir(name string) bool { return strings.HasPrefix(name, listPrefix) }
