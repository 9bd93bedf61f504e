package status

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/taskd/taskd/daemon/held"
)

// Read is Snapshot as taskd status shows it: a root that does not exist
// yet has no lists, a list named that does not exist is an error that
// names it, and the tasks held back by the daemon that serves root
// (heldTasks, as package held publishes them) are marked (Attend).
func Read(root string, lists []string, all bool, heldTasks []held.Task) ([]List, error) {
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		if len(lists) > 0 {
			return nil, fmt.Errorf("no list %q: the task root %s does not exist", lists[0], root)
		}
		return []List{}, nil
	}
	for _, l := range lists {
		if _, err := os.Stat(filepath.Join(root, l)); err != nil {
			return nil, fmt.Errorf("no list %q in %s", l, root)
		}
	}
	snap, err := Snapshot(root, lists, all)
	if err != nil {
		return nil, fmt.Errorf("read task lists: %w", err)
	}
	if snap == nil {
		snap = []List{}
	}
	Attend(snap, heldTasks)
	return snap, nil
}

// Subtree keeps of snap, the snapshot of one list, task id and the tasks
// below it (its children and theirs), in the list's order.
func Subtree(snap []List, id string) ([]List, error) {
	if len(snap) != 1 {
		return nil, fmt.Errorf("no task %s", id)
	}
	l := snap[0]
	byID := map[string]*Task{}
	for i := range l.Tasks {
		byID[l.Tasks[i].ID] = &l.Tasks[i]
	}
	if byID[id] == nil {
		return nil, fmt.Errorf("no task %s/%s", l.ID, id)
	}
	keep := map[string]bool{}
	var walk func(string)
	walk = func(id string) {
		if keep[id] || byID[id] == nil {
			return
		}
		keep[id] = true
		for _, c := range byID[id].Children {
			walk(c)
		}
	}
	walk(id)
	tasks := []Task{}
	for _, t := range l.Tasks {
		if keep[t.ID] {
			tasks = append(tasks, t)
		}
	}
	l.Tasks, l.Hidden = tasks, 0
	return []List{l}, nil
}
