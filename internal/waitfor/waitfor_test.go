package waitfor

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestWithin: a condition that comes to hold is seen, after as many looks
// as it takes; one that never holds is given up on after the deadline,
// not before; one that holds at the first look is looked at once.
func TestWithin(t *testing.T) {
	var looks atomic.Int32
	if !Within(time.Minute, func() bool { return looks.Add(1) == 5 }) {
		t.Fatal("a condition that held at the fifth look was not seen")
	}
	if got := looks.Load(); got != 5 {
		t.Errorf("looked %d times, want 5", got)
	}

	looks.Store(0)
	if !Within(time.Minute, func() bool { looks.Add(1); return true }) || looks.Load() != 1 {
		t.Errorf("a condition that held at once was looked at %d times, want 1", looks.Load())
	}

	start := time.Now()
	if Within(30*time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition that never held was reported held")
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Errorf("gave up after %v, before the deadline", waited)
	}
}

// TestWithinEvery: a costly condition is looked at no more often than
// asked.
func TestWithinEvery(t *testing.T) {
	var looks atomic.Int32
	start := time.Now()
	if !WithinEvery(time.Minute, 20*time.Millisecond, func() bool { return looks.Add(1) == 4 }) {
		t.Fatal("a condition that held at the fourth look was not seen")
	}
	if waited := time.Since(start); waited < 60*time.Millisecond {
		t.Errorf("four looks took %v, want at least three intervals of 20ms", waited)
	}
}

// TestCond: Cond fails the test that waits in vain, naming what it
// waited for.
func TestCond(t *testing.T) {
	ft := &failing{TB: t}
	func() {
		defer func() { recover() }()
		Cond(ft, "the moon", time.Millisecond, func() bool { return false })
	}()
	if ft.msg == "" {
		t.Fatal("Cond did not fail the test")
	}
	if want := "timed out after 1ms waiting for the moon"; ft.msg != want {
		t.Errorf("Cond failed with %q, want %q", ft.msg, want)
	}
	Cond(t, "nothing", time.Millisecond, func() bool { return true })
}

// failing records the message of Fatalf, and stops the caller as Fatalf
// does.
type failing struct {
	testing.TB
	msg string
}

func (f *failing) Helper() {}

func (f *failing) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}
