// Package daemon is the loop.
package daemon

import (
	"example.com/mini/daemon/config"
	"example.com/mini/daemon/task"
	"example.com/mini/internal/jsonorder"
	"example.com/mini/taskfile"
)

// A Daemon runs tasks.
type Daemon struct{}

// Run runs.
func (d *Daemon) Run(t *taskfile.Task, p config.Profile) {
	m := t.Metadata.Object("taskd") // want root
	m.Set("error", "x")             // want key error write
	m.Delete("retryAt")             // want key retryAt write
	note(m)
	_ = get(m, "agent") // want key agent helper
	_ = get(t.Metadata.Object("other"), "agent")
	mark(m, task.Running)
	s, _ := m.Object("result").String("sessionId") // want key result
	_ = s
	n, _ := tdOf(t).Int("attempt") // want key attempt
	_ = n
	task.Meta(t).Has("cwd")      // want key cwd
	_ = task.Strings(m, "tools") // want key tools helper
	v := view{td: m, other: t.Metadata}
	v.td.Has("hold")    // want key hold
	v.other.Has("hold") // not metadata.taskd
	switch p.Output {
	case "claude-stream": // want kind
	case "text":
	}
	d.observe(t)
}

func (d *Daemon) observe(t *taskfile.Task) {
	raw, ok := t.Metadata.Get("taskd") // want root
	if ok {
		raw.(*jsonorder.Object).Has("state") // want key state
	}
}

// note writes through a parameter.
func note(td *jsonorder.Object) {
	td.Set("note", 1) // want key note write
}

// get reads a key it is given.
func get(o *jsonorder.Object, key string) string {
	s, _ := o.String(key)
	return s
}

// mark is handed metadata.taskd and a state, which is no key.
func mark(o *jsonorder.Object, s task.State) { _ = o.Len() + len(s) }

// tdOf returns metadata.taskd.
func tdOf(t *taskfile.Task) *jsonorder.Object {
	return t.Metadata.Object("taskd") // want root
}

type view struct{ td, other *jsonorder.Object }
