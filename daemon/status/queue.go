package status

import (
	"time"

	"github.com/taskd/taskd/daemon/recur"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Queue is what status shows of a task's place in the queue
// (docs/scheduling.md): its priority, the time before which it does not
// start, and for a schedule its next time and its runs.
type Queue struct {
	Priority int `json:"priority,omitempty"`
	// StartsAt is metadata.taskd.notBefore while it is to come.
	StartsAt time.Time `json:"startsAt,omitzero"`
	// Schedule is a schedule's cron expression, NextRun when its next
	// run is made, RunsMade how many it made, LastRun the last one's id.
	Schedule string    `json:"schedule,omitempty"`
	NextRun  time.Time `json:"nextRun,omitzero"`
	RunsMade int       `json:"runsMade,omitempty"`
	LastRun  string    `json:"lastRun,omitempty"`
	// Agent is the agent the task names (metadata.taskd.agent, else its
	// owner's profile), and Window, when a window of hours of its list or
	// profile holds it back, why and until when (filled by taskd status,
	// which reads the configuration).
	Agent  string `json:"agent,omitempty"`
	Window string `json:"window,omitempty"`
}

// queueOf reads t's place in the queue at now.
func queueOf(t *taskfile.Task, now time.Time) Queue {
	var q Queue
	sp, err := task.ReadSpec(t)
	if err != nil {
		return q
	}
	q.Priority, q.Agent = sp.Priority, sp.Agent
	if _, owner := task.Addressed(t); q.Agent == "" {
		q.Agent = owner
	}
	if sp.NotBefore.After(now) && !sp.State.Claimed() {
		q.StartsAt = sp.NotBefore
	}
	if sp.Schedule != "" {
		r := recur.Of(t)
		q.Schedule, q.NextRun, q.RunsMade, q.LastRun = sp.Schedule, r.Next, r.Runs, r.LastRun
	}
	return q
}
