// Package waitfor is how a test waits for something to happen: it looks
// at a condition again and again until it holds, and gives up after a
// deadline. The deadline bounds how long a broken program may hang a
// test, never how fast a working one must be. It is imported by tests
// only.
//
// The condition is looked at once at once, then after intervals that
// grow from a millisecond to maxInterval: a condition that holds soon is
// seen soon, and one that takes seconds costs few looks.
package waitfor

import (
	"testing"
	"time"
)

// maxInterval is the longest wait between two looks at a condition.
const maxInterval = 50 * time.Millisecond

// Within reports whether cond holds before timeout has passed. cond is
// looked at once more after the deadline, so a condition that held at the
// end is not missed.
func Within(timeout time.Duration, cond func() bool) bool {
	return poll(timeout, time.Millisecond, maxInterval, cond)
}

// WithinEvery is Within for a condition that is costly to look at (one
// that runs a command, say): it is looked at every interval.
func WithinEvery(timeout, interval time.Duration, cond func() bool) bool {
	return poll(timeout, interval, interval, cond)
}

// poll looks at cond after intervals that grow from first to most.
func poll(timeout, first, most time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	interval := first
	next := time.NewTimer(interval)
	defer next.Stop()
	for !cond() {
		if !time.Now().Before(deadline) {
			return false
		}
		<-next.C
		interval = min(2*interval, most)
		next.Reset(interval)
	}
	return true
}

// Cond waits until cond holds, and fails tb, naming what it waited for,
// if it does not within timeout.
func Cond(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	if !Within(timeout, cond) {
		tb.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}
