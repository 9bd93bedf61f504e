package ui

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/fsnotify/fsnotify"
)

// How the feed paces itself.
const (
	// settle is how long the feed gathers file events before it reads
	// what they name: a burst of writes costs one read of each file.
	settle = 100 * time.Millisecond
	// tickEvery is how often the clock of the view moves (ages, cost per
	// minute); the daemon's state and its held tasks are read every
	// other tick. Nothing else is read without a file event.
	tickEvery = time.Second
	// transcriptTail is how much of the end of a transcript the view
	// reads when it starts following one.
	transcriptTail = 64 << 10
)

// A feed reads the root for the view and sends it what changed: a
// snapshot of the lists whenever a task file changes (reading again only
// that file), the selected task's transcript as it grows, and the clock.
// It watches the root, each list, each list's notes of refusal and the
// run folder of the task followed.
type feed struct {
	opt     Options
	follows chan key      // Follow's requests; the latest wins
	rereads chan struct{} // Reread's
}

func newFeed(opt Options) *feed {
	return &feed{opt: opt, follows: make(chan key, 1), rereads: make(chan struct{}, 1)}
}

// Reread asks the feed to read every file again. It never blocks.
func (f *feed) Reread() {
	select {
	case f.rereads <- struct{}{}:
	default:
	}
}

// Follow asks the feed to follow task k's transcript instead of the one
// it follows (a key of a list, none). It never blocks.
func (f *feed) Follow(k key) {
	for {
		select {
		case f.follows <- k:
			return
		default:
			select {
			case <-f.follows:
			default:
			}
		}
	}
}

// run reads and watches until ctx ends, sending what it reads to send.
func (f *feed) run(ctx context.Context, send func(tea.Msg)) {
	r := newReader(f.opt)
	w, err := fsnotify.NewWatcher()
	if err == nil {
		defer w.Close()
		r.watch = w.Add
		r.unwatch = w.Remove
	} else {
		r.problem = "file events cannot be watched (" + err.Error() + "): press ctrl-r to read again"
	}
	watching := r.addWatch(f.opt.Root)
	r.scan()
	send(r.snapshot())

	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	var settled <-chan time.Time
	wake := func() {
		if settled == nil {
			settled = time.After(settle)
		}
	}
	ticks := 0
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if r.note(ev) {
				wake()
			}
		case err := <-errs:
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				r.all = true // events were lost: read everything
				wake()
			}
		case <-f.rereads:
			r.all = true
			wake()
		case k := <-f.follows:
			r.follow(k)
			send(r.transcript())
			send(r.describe())
		case <-settled:
			settled = nil
			lists, transcript := r.flush()
			if lists {
				send(r.snapshot())
			}
			if transcript {
				send(r.transcript())
			}
			if r.retell() {
				send(r.describe())
			}
		case now := <-tick.C:
			if !watching && r.watch != nil && r.addWatch(f.opt.Root) {
				watching = true // the root has come since the view started
				r.rescan = true
				wake()
			}
			newDay := r.costs.at(now)
			if newDay {
				for id := range r.lists {
					l := r.lists[id]
					r.costs.list(&l)
				}
			}
			if ticks++; ticks%2 == 0 && (r.checkDaemon() || r.checkPauses(now)) || newDay {
				send(r.snapshot())
			}
			send(tickMsg(now))
		}
	}
}
