// Package task owns metadata.taskd: its accesses are counted apart.
package task

import "example.com/mini/taskfile"

// A State is a task's state.
type State string

// Running is a state.
const Running State = "running"

// Meta returns metadata.taskd of t.
func Meta(t *taskfile.Task) *taskfile.Object {
	return t.Metadata.EnsureObject("taskd")
}

// Move writes a state.
func Move(t *taskfile.Task, s State) {
	Meta(t).Set("state", string(s))
}

// Strings reads a key's strings.
func Strings(o *taskfile.Object, key string) []string {
	v, _ := o.Get(key)
	s, _ := v.([]string)
	return s
}
