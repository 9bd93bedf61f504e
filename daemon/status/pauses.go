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

// pauseOf returns the pause, among rec's, that holds back task t (taskd's,
// not a workflow, waiting to start or paused itself) at now; nil if none
// does.
func pauseOf(rec pausefile.Record, t *taskfile.Task, ownerProfile string, now time.Time) *Pause {
	if len(rec.Profiles) == 0 || t.Status != taskfile.StatusPending {
		return nil
	}
	if wf, _ := t.Metadata.String("workflowType"); wf != "" {
		return nil // its steps name their own agents
	}
	switch task.Of(t) {
	case task.None, task.Retrying, task.Paused:
	default:
		return nil
	}
	agent, _ := t.Metadata.Object("taskd").String("agent")
	if agent == "" {
		agent = ownerProfile
	}
	for name, p := range rec.Profiles {
		if p.Holds(agent, now) {
			return &Pause{Profile: name, Reason: p.Reason, By: p.By, Until: p.Until}
		}
	}
	return nil
}
