// Package clock is the time the daemon decides with: when a task may
// start (its notBefore, a schedule's next time, a window of hours, the
// end of a pause) is read from a Clock, and the loop sleeps on the
// Clock's timer until the next of those times. Real is the system's
// clock; a Fake is set and moved by a test, and its timers fire when it
// is moved past them, so that no test sleeps until a time of day or reads
// the wall clock to know what the daemon will decide.
package clock

import (
	"sync"
	"time"
)

// A Clock tells the time and makes timers that fire by it.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once d
	// has passed on this clock.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in a goroutine of its own once d has passed on
	// this clock, unless Stop is called first: no goroutine waits
	// meanwhile (time.AfterFunc).
	AfterFunc(d time.Duration, f func()) Stopper
}

// A Stopper stops a function's call by AfterFunc that has not begun;
// it reports whether it stopped it.
type Stopper interface {
	Stop() bool
}

// A Timer is a time.Timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	// Reset makes the timer fire once d has passed from now, whether or
	// not it fired or was stopped; a value it sent and nobody took is
	// dropped.
	Reset(d time.Duration)
	Stop() bool
}

// Real is the system's clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// A real timer waits at least minWait: a loop woken for a time already
// past does not spin on it.
func (realClock) NewTimer(d time.Duration) Timer {
	return &realTimer{t: time.NewTimer(max(d, minWait))}
}

const minWait = time.Millisecond

// AfterFunc implements Clock.
func (realClock) AfterFunc(d time.Duration, f func()) Stopper {
	return time.AfterFunc(d, f)
}

type realTimer struct{ t *time.Timer }

func (r *realTimer) C() <-chan time.Time { return r.t.C }

// Reset implements Timer; since Go 1.23 a timer's Reset drops a value
// not taken.
func (r *realTimer) Reset(d time.Duration) { r.t.Reset(max(d, minWait)) }

func (r *realTimer) Stop() bool { return r.t.Stop() }

// A Fake is a clock a test sets. It stands still until Set or Advance
// moves it; its timers fire when it reaches their time. Safe for
// concurrent use.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
}

// NewFake returns a Fake that reads now.
func NewFake(now time.Time) *Fake {
	return &Fake{now: now, timers: map[*fakeTimer]struct{}{}}
}

// Now implements Clock.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock d forward and fires the timers it passes.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	t := f.now.Add(d)
	f.mu.Unlock()
	f.Set(t)
}

// Set moves the clock to t (never back) and fires the timers it passes.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.After(f.now) {
		f.now = t
	}
	for ft := range f.timers {
		if !ft.at.After(f.now) {
			delete(f.timers, ft)
			if ft.fn != nil {
				go ft.fn()
				continue
			}
			select {
			case ft.c <- f.now:
			default:
			}
		}
	}
}

// Back moves the clock d back, as a system clock set back by a person or
// by time synchronisation; its timers keep the times they fire at.
func (f *Fake) Back(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(-d)
}

// NewTimer implements Clock.
func (f *Fake) NewTimer(d time.Duration) Timer {
	ft := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	ft.Reset(d)
	return ft
}

// AfterFunc implements Clock: f is called once the clock is moved to
// d from now, or past it.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Stopper {
	ft := &fakeTimer{f: f, fn: fn}
	f.mu.Lock()
	defer f.mu.Unlock()
	ft.at = f.now.Add(d)
	if d <= 0 {
		go fn()
		return ft
	}
	f.timers[ft] = struct{}{}
	return ft
}

type fakeTimer struct {
	f  *Fake
	at time.Time
	c  chan time.Time // nil for AfterFunc's
	fn func()         // AfterFunc's function
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Reset(d time.Duration) {
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-t.c:
	default:
	}
	t.at = f.now.Add(d)
	if d <= 0 {
		delete(f.timers, t)
		t.c <- f.now
		return
	}
	f.timers[t] = struct{}{}
}

// Stop implements Timer and Stopper.
func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	_, pending := t.f.timers[t]
	delete(t.f.timers, t)
	return pending
}
