package status

import (
	"errors"
	"path/filepath"
	"slices"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// A Tracker keeps what Snapshot reads of one list up to date file by
// file, for a view that shows the list as it changes: Update reads again
// only the task files named, Sync only the files that came or went, and
// List links them (children, open blockers, what waiting tasks wait for,
// the daemon's notes of refusal) as Snapshot does. A Tracker is not safe
// for concurrent use.
type Tracker struct {
	id    string
	all   bool
	dir   *taskfile.Dir
	ids   []string // the task files' ids, in order (taskfile.SortIDs)
	files map[string]*tracked
	// refused and fix say why a daemon does not serve the list; misnamed
	// are its files whose names cannot be task ids.
	refused, fix string
	misnamed     []Misnamed
	pauses       pausefile.Record // SetPauses's
}

// tracked is what a Tracker read of one task file.
type tracked struct {
	task     Task   // before List links it
	status   string // Claude Code's status, for the tasks it blocks
	shown    bool   // taskd's own, or the Tracker shows every task
	waits    waitIDs
	pausable bool   // a profile's pause may hold it back (pausable)
	agent    string // the agent whose profile's pause does
}

// NewTracker reads list id under root as Snapshot does (all: every task,
// not only taskd's) and returns a Tracker of it.
func NewTracker(root, id string, all bool) (*Tracker, error) {
	dir, err := taskfile.Open(filepath.Join(root, id))
	if err != nil {
		return nil, err
	}
	tr := &Tracker{id: id, all: all, dir: dir, files: map[string]*tracked{}}
	return tr, tr.Sync()
}

// Sync reads the list's directory again: the task files that came are
// read, those that went are forgotten, and why a daemon would refuse the
// list and which files it does not read are told again. Files it knew
// are not read again (Update).
func (tr *Tracker) Sync() error {
	ids, misnamed, err := tr.dir.Names()
	if err != nil {
		return err
	}
	tr.refused, tr.fix = "", ""
	if err := area.CheckList(tr.dir.Path(), false); err != nil {
		var u *fsroot.UnsafeError
		if errors.As(err, &u) {
			tr.refused, tr.fix = u.Problem+": "+u.Why, u.Fix
		}
	}
	tr.misnamed = tr.misnamed[:0]
	for _, name := range misnamed {
		problem, fix, _ := taskfile.Misnamed(name)
		tr.misnamed = append(tr.misnamed, Misnamed{Name: name, Problem: problem, Fix: fix})
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
		if tr.files[id] == nil {
			tr.read(id)
		}
	}
	for id := range tr.files {
		if !seen[id] {
			delete(tr.files, id)
		}
	}
	tr.ids = ids
	return nil
}

// Update reads the task files of ids again: one that is gone is
// forgotten, one that is new is added.
func (tr *Tracker) Update(ids ...string) {
	for _, id := range ids {
		if !taskfile.ValidID(id) {
			continue
		}
		_, known := tr.files[id]
		tr.read(id)
		_, now := tr.files[id]
		switch {
		case now && !known:
			i, _ := slices.BinarySearchFunc(tr.ids, id, taskfile.CompareIDs)
			tr.ids = slices.Insert(tr.ids, i, id)
		case known && !now:
			if i, ok := slices.BinarySearchFunc(tr.ids, id, taskfile.CompareIDs); ok {
				tr.ids = slices.Delete(tr.ids, i, i+1)
			}
		}
	}
}

// SetPauses gives the Tracker the root's pauses (package pausefile), which
// List shows on the tasks they hold back.
func (tr *Tracker) SetPauses(rec pausefile.Record) { tr.pauses = rec }

// Reload reads every task file again.
func (tr *Tracker) Reload() error {
	clear(tr.files)
	return tr.Sync()
}

// read reads task file id into tr.files; a file that is gone is
// forgotten.
func (tr *Tracker) read(id string) {
	ts := Task{List: tr.id, ID: id}
	t, err := tr.dir.Read(id)
	var bad *taskfile.BadFileError
	switch {
	case errors.As(err, &bad):
		ts.Rejected, ts.Fix = bad.Problem, bad.Fix
		ts.Since = modTime(tr.dir.File(id))
		tr.files[id] = &tracked{task: ts, shown: true}
		return
	case err != nil:
		delete(tr.files, id) // gone meanwhile
		return
	}
	f := &tracked{status: t.Status}
	owned, ownerProfile := task.Addressed(t)
	if owned {
		f.agent, f.pausable = pausable(t, ownerProfile)
	}
	if f.shown = owned || tr.all; f.shown {
		fillStatus(&ts, t, owned, tr.dir.File(id))
		if kind, ids := waitsOf(t); len(ids) > 0 {
			f.waits = waitIDs{kind, ids}
		}
	}
	f.task = ts
	tr.files[id] = f
}

// List returns the list as Snapshot reads it: its tasks in order, each
// with its children, its blockers that have not completed and what it
// waits for, and the tasks a daemon refused marked from its notes. The
// tasks are the List's own: Attend may mark them.
func (tr *Tracker) List() List {
	ls := List{ID: tr.id, Tasks: make([]Task, 0, len(tr.ids)), Refused: tr.refused, Fix: tr.fix}
	if len(tr.misnamed) > 0 {
		ls.Misnamed = slices.Clone(tr.misnamed)
	}
	status := make(map[string]string, len(tr.ids))
	waiting := map[string]waitIDs{}
	now := time.Now()
	for _, id := range tr.ids {
		f := tr.files[id]
		if f == nil {
			continue
		}
		status[id] = f.status
		if !f.shown {
			ls.Hidden++
			continue
		}
		ls.Tasks = append(ls.Tasks, f.task)
		if f.pausable && len(tr.pauses.Profiles) > 0 {
			ls.Tasks[len(ls.Tasks)-1].Pause = pauseFor(tr.pauses, f.agent, now)
		}
		if len(f.waits.ids) > 0 {
			waiting[id] = f.waits
		}
	}
	addRejections(tr.dir, ls.Tasks)
	byID := make(map[string]*Task, len(ls.Tasks))
	for i := range ls.Tasks {
		byID[ls.Tasks[i].ID] = &ls.Tasks[i]
	}
	for i := range ls.Tasks {
		ts := &ls.Tasks[i]
		if p := byID[ts.Parent]; p != nil && p != ts { // ids are unique: no duplicates
			p.Children = append(p.Children, ts.ID)
		}
		var open []string
		for _, b := range ts.BlockedBy {
			if status[b] != taskfile.StatusCompleted {
				open = append(open, b)
			}
		}
		ts.BlockedBy = open
	}
	fillWaits(&ls, waiting)
	return ls
}
