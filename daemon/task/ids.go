package task

import (
	"errors"
	"fmt"
	"strings"

	"github.com/taskd/taskd/taskfile"
)

// ErrBadID is wrapped by the error for a task that names, as its parent,
// child or blocker, something that is not a task id.
var ErrBadID = errors.New("not a task id")

// ErrNUL is wrapped by the error for a prompt with a NUL byte.
var ErrNUL = errors.New("NUL byte")

// CheckIDs checks every id task t names: metadata.taskd.parent, its
// children (metadata.taskd.children, a fork's branches) and blockedBy.
// Ids become file names, inbox and run folder names: one that is not a
// task id (taskfile.ValidID) could name a path outside the list, and can
// never name a task, so it is refused with where it was found.
func CheckIDs(t *taskfile.Task, sp Spec) error {
	bad := func(field, v string) error {
		return fmt.Errorf("%s is %q, which is %w (1-128 of A-Z a-z 0-9 _ -): it can name no task file of this list, so taskd refuses it rather than wait for it forever", field, v, ErrBadID)
	}
	if sp.Parent != "" && !taskfile.ValidID(sp.Parent) {
		return bad("metadata.taskd.parent", sp.Parent)
	}
	for i, b := range t.BlockedBy {
		if !taskfile.ValidID(b) {
			return bad(fmt.Sprintf("blockedBy[%d]", i), b)
		}
	}
	if ch := t.Metadata.Object("taskd").Object("children"); ch != nil {
		for _, kind := range []string{"parallel", "sequential", "returns"} {
			for i, c := range Strings(ch, kind) {
				if !taskfile.ValidID(c) {
					return bad(fmt.Sprintf("metadata.taskd.children.%s[%d]", kind, i), c)
				}
			}
		}
	}
	if fs := t.Metadata.Object("forkState").Object("branches"); fs != nil {
		for _, name := range fs.Keys() {
			if c, ok := fs.Object(name).String("childTaskId"); ok && !taskfile.ValidID(c) {
				return bad("metadata.forkState.branches."+name+".childTaskId", c)
			}
		}
	}
	return nil
}

// Check checks what task id (t, its spec sp) names beyond the types of its
// fields, as the daemon does when it accepts a task: every id it names
// (CheckIDs), not itself as its parent, no NUL byte where no path or
// command line can hold one. A task being made has no id yet ("").
func Check(t *taskfile.Task, id string, sp Spec) error {
	if err := CheckIDs(t, sp); err != nil {
		return err
	}
	if id != "" && sp.Parent == id {
		return fmt.Errorf("metadata.taskd.parent names the task itself (%q); a task cannot be its own parent", id)
	}
	if strings.IndexByte(sp.Cwd, 0) >= 0 {
		return fmt.Errorf("%w: metadata.taskd.cwd has a NUL byte (\\u0000), which no path can hold; remove it", ErrNUL)
	}
	if i := strings.IndexByte(Prompt(t, sp), 0); i >= 0 {
		return fmt.Errorf("%w: the prompt has a NUL byte (\\u0000) at byte %d; no program's command line or input can carry it intact, so remove it", ErrNUL, i)
	}
	return nil
}
