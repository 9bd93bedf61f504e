// Package pausefile is the root's record of what is paused, each pause
// with why, since and until when, in <root>/.taskd-pauses.json: the agent
// profiles a usage limit paused; and what a person paused (taskd pause:
// the whole root, a list, a profile) or a budget per window spent paused
// until the next window (holds.go). The daemon writes a profile's pause
// when an agent meets a limit, and a budget's when it is spent, and reads
// the file when it starts and whenever it changes, so a restart keeps
// every pause; a person lifts one early with taskd resume, which removes
// it; taskd status reads it to say, on every task a pause holds, why the
// task waits.
//
// The file is JSON, written whole through a temporary file and a rename,
// under an flock on <root>/.taskd-pauses.lock that every writer takes (the
// daemon and the taskd commands). A file that is not a regular file (a
// link, a FIFO) is never followed nor blocked on: it reads as an error,
// and the next write replaces it.
package pausefile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/internal/fsroot"
)

// Name is the file's name in the root; LockName the lock file's beside it.
const (
	Name     = ".taskd-pauses.json"
	LockName = ".taskd-pauses.lock"
)

// maxSize bounds the file: a pause per profile is a few hundred bytes.
const maxSize = 1 << 20

// Who sets a pause.
const (
	ByLimit = "usage limit" // an agent of the profile met a usage limit
)

// A Record is the file: what is paused.
type Record struct {
	// Profiles are the agent profiles a usage limit paused, by name: no
	// agent of one starts while its pause lasts.
	Profiles map[string]Pause `json:"profiles,omitempty"`
	// All, Lists and Held are the pauses a person set (taskd pause) or a
	// budget per window spent: of the whole root, of lists by id, of
	// agent profiles by name (holds.go).
	All   *Pause           `json:"all,omitempty"`
	Lists map[string]Pause `json:"lists,omitempty"`
	Held  map[string]Pause `json:"heldProfiles,omitempty"`
}

// A Pause is one pause.
type Pause struct {
	// Reason says why, in words: taskd status shows it on every task the
	// pause holds.
	Reason string    `json:"reason"`
	By     string    `json:"by"` // ByLimit
	Since  time.Time `json:"since"`
	// Until is when the pause ends by itself; zero: when it is lifted.
	Until time.Time `json:"until,omitzero"`
	// Limit is the usage limit met, in the agent's words, for a pause set
	// by one.
	Limit *agent.Limit `json:"limit,omitempty"`
	// Agents are the agent names that run with the profile (a task's
	// metadata.taskd.agent, or taskd:<name> as its owner), and Default
	// says whether a task that names none does: so that taskd status
	// tells, from the files alone, which tasks the pause holds.
	Agents  []string `json:"agents,omitempty"`
	Default bool     `json:"default,omitempty"`
	// Stop says the pause interrupted the agents that ran in what it
	// pauses (taskd pause --stop): their tasks run again when it ends.
	Stop bool `json:"stop,omitempty"`
}

// Holds reports whether the pause holds a task whose agent is named agent
// ("" for none) at now.
func (p Pause) Holds(agent string, now time.Time) bool {
	if !p.Until.IsZero() && !p.Until.After(now) {
		return false
	}
	if agent == "" {
		return p.Default
	}
	return slices.Contains(p.Agents, agent)
}

// Path is the file of root.
func Path(root string) string { return filepath.Join(root, Name) }

// Read returns root's record; an absent file is an empty record.
func Read(root string) (Record, error) {
	var r Record
	data, err := fsroot.ReadFile(root, Path(root), maxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("read %s: %w", Path(root), err)
	}
	return r, nil
}

// Update changes root's record with fn under the lock and writes it back
// if fn returns nil, with the pauses that have ended left out (as of
// now). A file that does not parse is replaced: it holds nothing the task
// files do not also say.
func Update(ctx context.Context, root string, now time.Time, fn func(*Record) error) error {
	lock, err := fsroot.LockFile(ctx, filepath.Join(root, LockName))
	if err != nil {
		return err
	}
	defer lock.Close() // releases the flock
	r, _ := Read(root)
	if err := fn(&r); err != nil {
		return err
	}
	r.prune(now)
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return fsroot.WriteFile(root, Path(root), append(data, '\n'))
}
