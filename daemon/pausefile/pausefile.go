// Package pausefile is the root's record of what is paused: the agent
// profiles a usage limit paused, each with why, since and until when, in
// <root>/.taskd-pauses.json. The daemon writes a profile's pause when an
// agent meets a limit and reads the file when it starts, so a restart
// keeps every pause, also one no paused task records any more; a person
// lifts one early with taskd resume, which removes it; taskd status reads
// it to say, on every task a pause holds, why the task waits.
//
// The file is JSON, written whole through a temporary file and a rename,
// under an flock on <root>/.taskd-pauses.lock that every writer takes (the
// daemon and the taskd commands). Its shape leaves room for pauses a
// person sets (taskd pause): beside "profiles", lists and the whole root
// would be kept the same way, each a Pause whose By says who set it and
// whose Until is zero while it lasts until resumed.
package pausefile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
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
	// Profiles are the paused agent profiles, by name: no agent of one
	// starts while its pause lasts.
	Profiles map[string]Pause `json:"profiles,omitempty"`
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
	lockPath := filepath.Join(root, LockName)
	if fi, err := os.Lstat(lockPath); err == nil && !fi.Mode().IsRegular() {
		// A link would have the lock made, or taken, somewhere else.
		return fmt.Errorf("%s is not a regular file: remove it (taskd makes its own)", lockPath)
	}
	lock, err := fsroot.OpenRegular(lockPath, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("lock %s: %w", lockPath, err)
	}
	defer lock.Close() // releases the flock
	if err := fsroot.Flock(ctx, lock, true); err != nil {
		return fmt.Errorf("lock %s: %w", lockPath, err)
	}
	r, _ := Read(root)
	if err := fn(&r); err != nil {
		return err
	}
	for name, p := range r.Profiles {
		if !p.Until.IsZero() && !p.Until.After(now) {
			delete(r.Profiles, name)
		}
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return fsroot.WriteFile(root, Path(root), append(data, '\n'))
}
