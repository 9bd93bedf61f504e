package status

// Walk calls fn for each task of l in the order of a tree: a task, then
// the tasks below it (its children, in the order of its Children), each
// drawn under it. lead is what goes before the task's id: "" for a task
// whose parent is not in the list (a root), else the lines of the tree,
// "├ " or "└ " after "│ " or "  " for each level above. fn reports
// whether to walk below the task (false: its subtree is folded). Tasks in
// a parent cycle, which no root reaches, come at the end as roots, so
// that none is lost; a task reached twice in a malformed tree is walked
// once.
func Walk(l *List, fn func(t *Task, lead string) bool) {
	byID := make(map[string]*Task, len(l.Tasks))
	for i := range l.Tasks {
		byID[l.Tasks[i].ID] = &l.Tasks[i]
	}
	done := make(map[string]bool, len(l.Tasks))
	var walk func(t *Task, prefix, branch string)
	walk = func(t *Task, prefix, branch string) {
		done[t.ID] = true
		if !fn(t, prefix+branch) {
			markBelow(t, byID, done)
			return
		}
		next := prefix
		switch branch {
		case "├ ":
			next += "│ "
		case "└ ":
			next += "  "
		}
		var kids []*Task
		for _, c := range t.Children {
			if ct := byID[c]; ct != nil && !done[c] {
				kids = append(kids, ct)
			}
		}
		for k, ct := range kids {
			if done[ct.ID] { // reached twice in a malformed tree
				continue
			}
			b := "├ "
			if k == len(kids)-1 {
				b = "└ "
			}
			walk(ct, next, b)
		}
	}
	for i := range l.Tasks {
		t := &l.Tasks[i]
		if p := byID[t.Parent]; p == nil || p == t {
			walk(t, "", "")
		}
	}
	for i := range l.Tasks {
		if t := &l.Tasks[i]; !done[t.ID] {
			walk(t, "", "")
		}
	}
}

// markBelow marks the tasks below t as walked: a folded subtree's tasks
// are not roots.
func markBelow(t *Task, byID map[string]*Task, done map[string]bool) {
	for _, c := range t.Children {
		if ct := byID[c]; ct != nil && !done[c] {
			done[c] = true
			markBelow(ct, byID, done)
		}
	}
}
