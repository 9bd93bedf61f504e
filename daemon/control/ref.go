package control

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/internal/fsroot"
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
// file (which must be <root>/<list>/<id>.json, see FileRef), or an id
// alone, which is looked up in defaultList when that is set, else in the
// only list under root that has a task of that id (or the only list there
// is). The task need not exist; ids are checked by whoever opens them.
func ParseRef(root, ref, defaultList string) (Ref, error) {
	if strings.HasSuffix(ref, ".json") {
		return FileRef(root, ref)
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

// FileRef resolves the path of a task file as a task of root: the file
// must be <root>/<list>/<id>.json, by its path or, where links lead to
// the root (the root itself may sit behind a link the user made), by the
// directory its list is in. Anything else, a file outside the root, in a
// directory below a list or at the root itself, is refused: nothing
// writes a task, its lock or a list's files anywhere but in a list of its
// root. The task is then acted on at <root>/<list>/<id>.json, where the
// list must be a directory, not a link (OpenList).
func FileRef(root, path string) (Ref, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Ref{}, err
	}
	elems, err := fsroot.Split(root, abs)
	if err != nil && errors.Is(err, fsroot.ErrEscape) && sameDir(filepath.Dir(filepath.Dir(abs)), root) {
		elems, err = []string{filepath.Base(filepath.Dir(abs)), filepath.Base(abs)}, nil
	}
	if err == nil && len(elems) != 2 {
		err = errors.New("not in a list directly under the root")
	}
	if err != nil {
		return Ref{}, fmt.Errorf("task file %s is not a task of the root %s (%v): taskd acts only on <root>/<list>/<id>.json; give --root or set $TASKD_ROOT for another root", abs, root, err)
	}
	r := Ref{Root: root, List: elems[0], ID: strings.TrimSuffix(elems[1], ".json")}
	if !taskfile.ValidID(r.List) {
		return Ref{}, fmt.Errorf("task file %s: %q is not a list name (1-128 of A-Z a-z 0-9 _ -)", abs, r.List)
	}
	return r, nil
}

// sameDir reports whether the directories a and b are the same one once
// links are resolved.
func sameDir(a, b string) bool {
	ra, err := filepath.EvalSymlinks(a)
	if err != nil {
		return false
	}
	rb, err := filepath.EvalSymlinks(b)
	return err == nil && ra == rb
}

// ListNames returns the names of the lists under root: its directories
// whose names are list ids.
func ListNames(root string) ([]string, error) {
	entries, err := fsroot.ReadDirectory(root)
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
