package task

import (
	"slices"
	"testing"
)

// TestEventsComplete: Events lists every event that has a name or a rule,
// once each, so that what iterates over it (the generated state diagram
// of docs/architecture.md) misses none.
func TestEventsComplete(t *testing.T) {
	for ev := range eventNames {
		if !slices.Contains(Events, ev) {
			t.Errorf("event %v is not in Events", ev)
		}
	}
	for ev := range rules {
		if !slices.Contains(Events, ev) {
			t.Errorf("event %v has a rule but is not in Events", ev)
		}
	}
	for i, ev := range Events {
		if slices.Index(Events, ev) != i {
			t.Errorf("event %v is in Events twice", ev)
		}
	}
}
