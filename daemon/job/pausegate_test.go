package job

import (
	"context"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
)

type markingGate struct {
	agent.Gate
	marked int
}

func (g *markingGate) MarkRunning(context.Context) error { g.marked++; return nil }

// TestPauseGate_PassesMarkerOn: the gate that keeps an agent from
// starting while its profile is paused wraps the task's own gate; a runner
// that asks the gate for the running mark (agent.Marker) reaches the gate
// it wraps (without it, an attempt sent to a worker was published while its
// task still read starting, and a restart took its claim back).
func TestPauseGate_PassesMarkerOn(t *testing.T) {
	inner := &markingGate{}
	var g agent.Gate = pauseGate{Gate: inner, pauses: &Pauses{}, profile: "p", now: time.Now}
	m, ok := g.(agent.Marker)
	if !ok {
		t.Fatal("the pause gate is no agent.Marker")
	}
	if err := m.MarkRunning(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := inner.marked, 1; got != want {
		t.Errorf("the wrapped gate was asked to mark %d times, want %d", got, want)
	}
}
