package status

import (
	"time"

	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Pause is the pause of an agent profile that holds a task back: a usage
// limit another task of the profile met, recorded in the root's pause
// file (package pausefile). taskd resume PROFILE lifts it.
type Pause struct {
	Profile string    `json:"profile"`
	Reason  string    `json:"reason"`
	By      string    `json:"by"`
	Until   time.Time `json:"until,omitzero"`
}

// pausable returns the agent by whose profile's pause task t (taskd's,
// whose owner names ownerProfile) may be held back, and whether one may
// hold it at all: a task that is not a workflow (its steps name their
// own agents), waiting to start or paused itself.
func pausable(t *taskfile.Task, ownerProfile string) (agent string, ok bool) {
	if t.Status != taskfile.StatusPending {
		return "", false
	}
	if wf, _ := t.Metadata.String("workflowType"); wf != "" {
		return "", false
	}
	switch task.Of(t) {
	case task.None, task.Retrying, task.Paused:
	default:
		return "", false
	}
	agent, _ = t.Metadata.Object("taskd").String("agent")
	if agent == "" {
		agent = ownerProfile
	}
	return agent, true
}

// pauseFor returns the pause, among rec's, that holds back a task whose
// agent is agent at now; nil if none does.
func pauseFor(rec pausefile.Record, agent string, now time.Time) *Pause {
	for name, p := range rec.Profiles {
		if p.Holds(agent, now) {
			return &Pause{Profile: name, Reason: p.Reason, By: p.By, Until: p.Until}
		}
	}
	return nil
}
