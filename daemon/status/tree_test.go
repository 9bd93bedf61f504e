package status_test

import (
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/status"
)

// TestWalk: tasks in tree order with their leads; a folded task's subtree
// is left out (and its tasks are not taken for roots); tasks in a parent
// cycle come last.
func TestWalk(t *testing.T) {
	l := status.List{Tasks: []status.Task{
		{ID: "1", Children: []string{"2", "4"}},
		{ID: "2", Parent: "1", Children: []string{"3"}},
		{ID: "3", Parent: "2"},
		{ID: "4", Parent: "1"},
		{ID: "5"},
		{ID: "6", Parent: "7", Children: []string{"7"}},
		{ID: "7", Parent: "6", Children: []string{"6"}},
	}}
	walk := func(fold string) string {
		var b strings.Builder
		status.Walk(&l, func(t *status.Task, lead string) bool {
			b.WriteString(lead + t.ID + "\n")
			return t.ID != fold
		})
		return b.String()
	}
	for _, tt := range []struct{ fold, want string }{
		{"", "1\n├ 2\n│ └ 3\n└ 4\n5\n6\n└ 7\n"},
		{"2", "1\n├ 2\n└ 4\n5\n6\n└ 7\n"},
		{"1", "1\n5\n6\n└ 7\n"},
	} {
		if got := walk(tt.fold); got != tt.want {
			t.Errorf("folding %q:\n%s\nwant:\n%s", tt.fold, got, tt.want)
		}
	}
}
