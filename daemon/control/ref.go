package control

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/taskfile"
)

// A Ref names one task: its root, its list and its id.
type Ref struct {
	Root, List, ID string
}

func (r Ref) String() string { return r.List + "/" + r.ID }

// File is the path of the task's file.
func (r Ref) File() string { return filepath.Join(r.Root, r.List, r.ID+".json") }

// ParseRef resolves how a person names a task: LIST/ID, the path of its
// file (<list>/<id>.json, whose list's parent is then the root), or an id
// alone, which is looked up in defaultList when that is set, else in the
// only list under root that has a task of that id (or the only list there
// is). The task need not exist; ids and list names are checked by
// whoever opens them.
func ParseRef(root, ref, defaultList string) (Ref, error) {
	if strings.HasSuffix(ref, ".json") {
		abs, err := filepath.Abs(ref)
		if err != nil {
			return Ref{}, err
		}
		return Ref{Root: filepath.Dir(filepath.Dir(abs)), List: filepath.Base(filepath.Dir(abs)), ID: strings.TrimSuffix(filepath.Base(abs), ".json")}, nil
	}
	if list, id, ok := strings.Cut(ref, "/"); ok {
		return Ref{Root: root, List: list, ID: id}, nil
	}
	if defaultList != "" {
		return Ref{Root: root, List: defaultList, ID: ref}, nil
	}
	lists, err := ListNames(root)
	if err != nil {
		return Ref{}, fmt.Errorf("task %q: %w", ref, err)
	}
	var have []string
	for _, l := range lists {
		if _, err := os.Lstat(filepath.Join(root, l, ref+".json")); err == nil {
			have = append(have, l)
		}
	}
	switch {
	case len(have) == 1:
		return Ref{Root: root, List: have[0], ID: ref}, nil
	case len(have) > 1:
		for i, l := range have {
			have[i] = l + "/" + ref
		}
		return Ref{}, fmt.Errorf("task %q: which list? %d lists have it: %s", ref, len(have), strings.Join(have, ", "))
	case len(lists) == 1:
		return Ref{Root: root, List: lists[0], ID: ref}, nil // not there: said when it is opened
	}
	return Ref{}, fmt.Errorf("task %q: no list in %s has a task %s (lists: %s)", ref, root, ref, strings.Join(lists, ", "))
}

// ListNames returns the names of the lists under root: its directories
// whose names are list ids.
func ListNames(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && taskfile.ValidID(e.Name()) && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
