package status

import (
	"time"

	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Pause is a pause that holds a task back, recorded in the root's pause
// file (package pausefile): a usage limit another task of its profile met
// (Profile), or one a person set with taskd pause, or a budget per window
// spent (What: "list nightly", "profile claude", "everything"). Resume is
// the command that lifts it.
type Pause struct {
	Profile string    `json:"profile,omitempty"`
	What    string    `json:"what"`
	Reason  string    `json:"reason"`
	By      string    `json:"by"`
	Since   time.Time `json:"since,omitzero"`
	Until   time.Time `json:"until,omitzero"`
	Resume  string    `json:"resume"`
}

// listPause returns the pause, of a person's or a budget's, of list id or
// of everything, at now; nil if none.
func listPause(rec pausefile.Record, id string, now time.Time) *Pause {
	s, p, ok := rec.Hold(id, "", now)
	if !ok {
		return nil
	}
	return heldBy(s, p)
}

// heldBy is the Pause of a person's or a budget's pause p of scope s.
func heldBy(s pausefile.Scope, p pausefile.Pause) *Pause {
	out := &Pause{What: s.String(), Reason: p.Reason, By: p.By, Since: p.Since, Until: p.Until}
	switch s.Kind {
	case pausefile.All:
		out.Resume = "taskd resume --all"
	case pausefile.List:
		out.Resume = "taskd resume --list " + s.Name
	default:
		out.Profile, out.Resume = s.Name, "taskd resume --profile "+s.Name
	}
	return out
}

// A pausable is what a pause may hold back of a task: whether any may
// (a task of taskd's waiting to start or paused itself), and by whose
// profile's pause: agent, unless the task is a workflow (its steps name
// their own agents: only a pause of its list or of everything holds it).
type pausable struct {
	ok       bool
	workflow bool
	agent    string
}

// pausableOf returns what a pause may hold back of task t, whose owner
// names ownerProfile.
func pausableOf(t *taskfile.Task, ownerProfile string) pausable {
	if t.Status != taskfile.StatusPending {
		return pausable{}
	}
	switch task.Of(t) {
	case task.None, task.Retrying, task.Paused:
	default:
		return pausable{}
	}
	if wf, _ := t.Metadata.String("workflowType"); wf != "" {
		return pausable{ok: true, workflow: true}
	}
	agent, _ := t.Metadata.Object("taskd").String("agent")
	if agent == "" {
		agent = ownerProfile
	}
	return pausable{ok: true, agent: agent}
}

// pauseFor returns the pause, among rec's, that holds back a task of list
// that pb describes at now; nil if none does: a pause of the list or of
// everything first, then one of the task's profile.
func pauseFor(rec pausefile.Record, list string, pb pausable, now time.Time) *Pause {
	if !pb.ok {
		return nil
	}
	if p := listPause(rec, list, now); p != nil {
		return p
	}
	if pb.workflow {
		return nil
	}
	for s, p := range rec.Holds() {
		if s.Kind == pausefile.Profile && p.Holds(pb.agent, now) {
			return heldBy(s, p)
		}
	}
	for name, p := range rec.Profiles {
		if p.Holds(pb.agent, now) {
			return &Pause{Profile: name, What: "profile " + name, Reason: p.Reason, By: p.By, Since: p.Since, Until: p.Until, Resume: "taskd resume " + name}
		}
	}
	return nil
}
