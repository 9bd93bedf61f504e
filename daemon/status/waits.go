package status

import (
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Waits is what a waiting task waits for: its children (pushed, started,
// a workflow's fork branches), or the tasks it handed work to (a /handoff
// or /converge that suspended it).
type Waits struct {
	Kind  string   `json:"kind"`  // "children", "handoff" or "converge"
	Total int      `json:"total"` // how many it waits for
	Open  []string `json:"open"`  // the ids of those that have not ended yet
}

// waitsOf returns the kind and the ids of the tasks t, waiting, waits
// for; none for a task in another state.
func waitsOf(t *taskfile.Task) (string, []string) {
	if task.Of(t) != task.Waiting {
		return "", nil
	}
	if w := task.RecordOf(t).Wait; w != nil {
		if ids := task.Strings(w, "children"); len(ids) > 0 {
			kind, _ := w.String("kind")
			if kind == "" || kind == "results" {
				kind = "children"
			}
			return kind, ids
		}
	}
	if ids := children.WaitsFor(t); len(ids) > 0 {
		return "children", ids
	}
	return "", nil
}

// fillWaits sets Waits on each task of ls that waits, from the ids it
// waits for (waiting, by task id) and the states of the list's tasks.
func fillWaits(ls *List, waiting map[string]waitIDs) {
	byID := make(map[string]*Task, len(ls.Tasks))
	for i := range ls.Tasks {
		byID[ls.Tasks[i].ID] = &ls.Tasks[i]
	}
	for id, w := range waiting {
		t := byID[id]
		if t == nil {
			continue
		}
		ws := &Waits{Kind: w.kind, Total: len(w.ids), Open: []string{}}
		for _, c := range w.ids {
			ct := byID[c]
			if ct == nil || !task.State(ct.State).Ended() {
				ws.Open = append(ws.Open, c)
			}
		}
		t.Waits = ws
	}
}

// waitIDs is what a task waits for, as its file says.
type waitIDs struct {
	kind string
	ids  []string
}
