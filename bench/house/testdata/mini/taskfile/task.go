// Package taskfile is a task file.
package taskfile

import "example.com/mini/internal/jsonorder"

// Object is the ordered object.
type Object = jsonorder.Object

// A Task is a task file.
type Task struct {
	ID       string
	Metadata *Object
}

// Prompt reads the prompt of metadata.taskd.
func (t *Task) Prompt() string {
	s, _ := t.Metadata.Object("taskd").String("prompt") // want root; key prompt
	return s
}
