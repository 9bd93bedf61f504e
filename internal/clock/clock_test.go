package clock_test

import (
	"testing"
	"time"

	"github.com/taskd/taskd/internal/clock"
)

// TestFake: a fake clock stands still; its timers fire when it is moved to
// or past their time, never before, and a reset timer fires at its new
// time only.
func TestFake(t *testing.T) {
	t0 := time.Date(2031, 3, 3, 12, 0, 0, 0, time.UTC)
	c := clock.NewFake(t0)
	tm := c.NewTimer(3 * time.Second)
	fired := func() bool {
		select {
		case <-tm.C():
			return true
		default:
			return false
		}
	}
	c.Advance(2999 * time.Millisecond)
	if fired() {
		t.Fatal("fired before its time")
	}
	c.Advance(time.Millisecond)
	if !fired() {
		t.Fatal("did not fire at its time")
	}
	tm.Reset(time.Hour)
	c.Set(t0) // never back
	if got := c.Now(); !got.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("Set moved the clock back to %v", got)
	}
	c.Advance(59 * time.Minute)
	if fired() {
		t.Fatal("a reset timer fired at its old time")
	}
	tm.Stop()
	c.Advance(time.Hour)
	if fired() {
		t.Fatal("a stopped timer fired")
	}
	tm.Reset(0)
	if !fired() {
		t.Fatal("a timer of no wait did not fire at once")
	}
}

// TestFakeAfterFunc: a fake clock calls a function of AfterFunc when it
// is moved to or past its time, never before, once; a stopped one never.
func TestFakeAfterFunc(t *testing.T) {
	c := clock.NewFake(time.Date(2031, 3, 3, 12, 0, 0, 0, time.UTC))
	called := make(chan string, 2)
	c.AfterFunc(time.Second, func() { called <- "first" })
	stopped := c.AfterFunc(time.Second, func() { called <- "stopped" })
	if !stopped.Stop() {
		t.Error("Stop of a pending function: false, want true")
	}
	c.Advance(999 * time.Millisecond)
	select {
	case got := <-called:
		t.Fatalf("%s called before its time", got)
	default:
	}
	c.Advance(time.Millisecond)
	select {
	case got := <-called:
		if got != "first" {
			t.Fatalf("called %s, want first", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not called at its time")
	}
	c.Advance(time.Hour)
	if stopped.Stop() {
		t.Error("Stop of a stopped function: true, want false")
	}
	select {
	case got := <-called:
		t.Fatalf("%s called again, or after Stop", got)
	default:
	}
}
