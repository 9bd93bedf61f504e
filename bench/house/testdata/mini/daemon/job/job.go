// Package job is one task's work.
package job

import (
	"example.com/mini/daemon/config"
	"example.com/mini/internal/jsonorder"
	"example.com/mini/taskfile"
)

// A Job works on one task.
type Job struct {
	td      *jsonorder.Object
	Profile config.Profile
}

// New makes a job.
func New(t *taskfile.Task) *Job {
	return &Job{td: t.Metadata.Object("taskd")} // want root
}

// Start records the start.
func (j *Job) Start() {
	j.td.Set("startedAt", 1) // want key startedAt write
}

func (j *Job) resume() bool {
	return j.Profile.Flags == "claude" // want kind
}
