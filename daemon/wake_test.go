package daemon

import (
	"testing"
	"time"

	"github.com/taskd/taskd/internal/clock"
)

// Ensure an overdue re-check or retry wakes the loop at once (the real
// clock's timers wait a millisecond at least) instead of being taken for
// "nothing to wait for".
func TestDaemon_nextWake(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tests := []struct {
		name            string
		recheck, retry  time.Time
		other           time.Time // another list's re-check
		atMost, atLeast time.Duration
	}{
		{"nothing due", time.Time{}, time.Time{}, time.Time{}, time.Hour, time.Hour},
		{"overdue re-check", now.Add(-5 * time.Millisecond), time.Time{}, time.Time{}, 0, 0},
		{"overdue re-check, later retry", now.Add(-5 * time.Millisecond), now.Add(time.Minute), time.Time{}, 0, 0},
		{"overdue retry, another list later", time.Time{}, now.Add(-time.Second), now.Add(time.Minute), 0, 0},
		{"future re-check", now.Add(time.Minute), time.Time{}, time.Time{}, time.Minute, 50 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Daemon{clock: clock.NewFake(now), lists: map[string]*list{
				"a": {nextRecheck: tt.recheck, nextRetry: tt.retry},
				"b": {nextRecheck: tt.other},
			}}
			got := d.nextWake()
			if got > tt.atMost || got < tt.atLeast {
				t.Errorf("nextWake() = %v, want between %v and %v", got, tt.atLeast, tt.atMost)
			}
		})
	}
}
