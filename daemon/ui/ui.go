// Package ui is taskd ui: a full-screen terminal view of a task root, from
// which a person watches and steers its tasks. It shows the tree of lists
// and tasks with their states and the live progress of running agents,
// marks every task above one that needs a person, follows the selected
// task's transcript, and adds up what is running, waiting, needs a person
// or failed and what the agents cost today; from it a person answers a
// task, allows a refused call, cancels, retries, restarts and removes
// tasks, lifts a profile's pause, and reads a task's diff or transcript in
// a pager.
//
// It reads the same files as taskd status (package status), no daemon
// API: a feed (feed.go) watches the root, its lists and the selected
// task's run folder with fsnotify, reads again only what changed, and
// sends it to the model. The model (model.go, view.go) is pure: the same
// messages give the same screen. Every action goes through the functions
// the commands call (package control, status.Diff), and every action
// that loses something asks first.
package ui

import (
	"context"
	"errors"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/taskd/taskd/daemon/held"
)

// Options are what Run is told.
type Options struct {
	Root  string   // the task root
	Lists []string // only these lists (none: every list)
	All   bool     // tasks not addressed to taskd too
	Color bool     // paint with ANSI colours
	Home  string   // the user's home, shown as ~ in paths ("": none)
	// Daemon says whether a daemon serves the root.
	Daemon func() Daemon
	// Held returns the tasks the daemon serving the root holds back (a
	// write it needs failed), as package held publishes them.
	Held func() []held.Task
	// Pager is the command a diff and a transcript are shown with
	// ($PAGER, run by sh); "" for less, or more where less is missing.
	Pager string
	// In and Out are the terminal.
	In  io.Reader
	Out io.Writer
	// Now is the clock; nil for time.Now.
	Now func() time.Time
}

// Daemon is whether a daemon serves the root.
type Daemon struct {
	Running bool
	PID     int    // its process, if its lock file says
	Err     string // why it could not be told
}

// Run shows the view until the person quits (q, Ctrl-C) or ctx ends, and
// leaves the terminal as it found it.
func Run(ctx context.Context, opt Options) error {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := newFeed(opt)
	m := newModel(opt, f)
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithInput(opt.In), tea.WithOutput(opt.Out))
	go f.run(ctx, p.Send)
	_, err := p.Run()
	if errors.Is(err, tea.ErrInterrupted) || errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // a signal: the terminal is restored all the same
	}
	return err
}
