package status

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// addRejections marks the tasks of dir that a daemon has refused, by the
// notes it left in .taskd/rejected/ (see reject): files that parse but that
// the daemon will not run, such as a task naming an unknown agent or
// workflow, or one caught in a blockedBy cycle. A note older than its task
// file is stale (the file was edited since, and the daemon will look at it
// again), and a task already known to be bad keeps its own reason. The
// directory is read once; a missing one means nothing was refused.
func addRejections(dir *taskfile.Dir, tasks []Task) {
	notesDir := area.RejectedDir(dir.Path())
	entries, err := fsroot.ReadDirectory(notesDir)
	if err != nil || len(entries) == 0 {
		return
	}
	noted := make(map[string]os.DirEntry, len(entries))
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json.txt"); ok {
			noted[id] = e
		}
	}
	for i := range tasks {
		ts := &tasks[i]
		e, ok := noted[ts.ID]
		if !ok || ts.Rejected != "" {
			continue
		}
		info, err := e.Info()
		if err != nil || info.ModTime().Before(modTime(dir.File(ts.ID))) {
			continue
		}
		data, err := fsroot.ReadRegular(filepath.Join(notesDir, e.Name()))
		if err != nil {
			continue
		}
		ts.Rejected, ts.Fix = parseRejection(string(data), dir.File(ts.ID))
		ts.Since = info.ModTime()
	}
}

// parseRejection reads a note written by reject: "FILE: PROBLEM", a blank
// line, "How to fix it: FIX", then an explanation.
func parseRejection(text, file string) (problem, fix string) {
	first, rest, _ := strings.Cut(text, "\n")
	problem = strings.TrimPrefix(first, file+": ")
	if problem == first { // written under another path (a moved root)
		if _, p, ok := strings.Cut(first, ".json: "); ok {
			problem = p
		}
	}
	if _, after, ok := strings.Cut(rest, "How to fix it: "); ok {
		fix, _, _ = strings.Cut(after, "\n\n")
		fix = strings.Join(strings.Fields(fix), " ")
	}
	return problem, fix
}
