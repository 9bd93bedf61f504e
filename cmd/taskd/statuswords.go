package main

import (
	"time"

	"github.com/taskd/taskd/daemon/status"
)

// This file holds the words taskd status shows for a task: its state, its
// subject, its age.

// subject is the task's subject as views show it (status.Subject).
func subject(t *status.Task) string { return status.Subject(t) }

// displayState is the word status shows for a task's state.
func displayState(t *status.Task) string { return status.StateWord(t) }

// age renders a duration briefly: 5s, 3m, 2h, 4d (status.Age).
func age(now, since time.Time) string { return status.Age(now, since) }

// plural is one or many, as n asks (status.Plural).
func plural(n int, one, many string) string { return status.Plural(n, one, many) }

// stepCell is what the STEP column shows of a workflow: its current step
// and how many steps have run, "review 2/…" while it goes on, "end 3/3"
// once it has ended (no total is known before).
func stepCell(t *status.Task) string {
	count := status.StepCount(t)
	if count == "" {
		return t.Step
	}
	return fitWidth(clean(t.Step), max(colStep-width(count), 3)) + count
}

// waitsWords says what a waiting task waits for (status.WaitsWords).
func waitsWords(w *status.Waits, names map[string]string) string { return status.WaitsWords(w, names) }

// pauseWords says which paused profile holds a task back (status.PauseWords).
func pauseWords(now time.Time, p *status.Pause) string { return status.PauseWords(now, p) }
