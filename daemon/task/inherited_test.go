package task_test

import (
	"slices"
	"testing"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/navigator"
)

// TestInherited_BranchSettings: the fields a workflow's fork branch may set
// in its "taskd" (navigator.BranchSettings, checked by the validator) are
// exactly those a branch, like a child, otherwise inherits.
func TestInherited_BranchSettings(t *testing.T) {
	if got, want := navigator.BranchSettings, task.Inherited; !slices.Equal(got, want) {
		t.Errorf("navigator.BranchSettings = %q, want task.Inherited %q", got, want)
	}
}
