// Package parallel is the root's record of concurrency changed while the
// daemon runs (taskd parallel): how many agents may run at once in all,
// in a list, or of an agent profile, in <root>/.taskd-parallel.json. What
// it says takes the place of the configuration's concurrency,
// lists.<id>.concurrency and profiles.<name>.concurrency until it is
// reset; the daemon reads it when it starts and whenever it changes, and
// a lower number stops no agent: the slots above it are not given again
// when their agents exit (docs/scheduling.md).
//
// The file is JSON, written whole through a temporary file and a rename,
// under an flock on <root>/.taskd-parallel.lock that every writer takes.
// A file that is not a regular file (a link, a FIFO), or that does not
// parse, is reported and changes nothing.
package parallel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/taskd/taskd/internal/fsroot"
)

// Name is the file's name in the root; LockName the lock's beside it.
const (
	Name     = ".taskd-parallel.json"
	LockName = ".taskd-parallel.lock"
)

// maxSize bounds the file.
const maxSize = 1 << 20

// Max is the largest number of agents at once the file may set.
const Max = 1024

// A Record is the file: numbers of agents at once, by what they bound.
// Zero or absent: the configuration's.
type Record struct {
	All      int            `json:"all,omitempty"`
	Lists    map[string]int `json:"lists,omitempty"`
	Profiles map[string]int `json:"profiles,omitempty"`
}

// Empty reports whether r changes nothing.
func (r Record) Empty() bool { return r.All == 0 && len(r.Lists) == 0 && len(r.Profiles) == 0 }

// Path is the file of root.
func Path(root string) string { return filepath.Join(root, Name) }

// Read returns root's record; an absent file is an empty record.
func Read(root string) (Record, error) {
	var r Record
	data, err := fsroot.ReadFile(root, Name, maxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("read %s: %w", Path(root), err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, fmt.Errorf("read %s: %w", Path(root), err)
	}
	if err := r.check(); err != nil {
		return Record{}, fmt.Errorf("read %s: %w", Path(root), err)
	}
	return r, nil
}

// check refuses numbers out of range.
func (r Record) check() error {
	bad := func(what string, n int) error {
		if n < 0 || n > Max {
			return fmt.Errorf("%s is %d; it must be between 1 and %d", what, n, Max)
		}
		return nil
	}
	errs := []error{bad("all", r.All)}
	for k, n := range r.Lists {
		errs = append(errs, bad("lists."+k, n))
	}
	for k, n := range r.Profiles {
		errs = append(errs, bad("profiles."+k, n))
	}
	return errors.Join(errs...)
}

// Update changes root's record with fn under the lock and writes it back
// if fn returns nil. A file that does not parse is replaced.
func Update(ctx context.Context, root string, fn func(*Record) error) error {
	lock, err := fsroot.LockFile(ctx, filepath.Join(root, LockName))
	if err != nil {
		return err
	}
	defer lock.Close() // releases the flock
	r, err := Read(root)
	var pe *fs.PathError
	if err != nil && errors.As(err, &pe) {
		return err // a link or a FIFO in its place: not replaced
	}
	if err := fn(&r); err != nil {
		return err
	}
	if err := r.check(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return fsroot.WriteFile(root, Name, append(data, '\n'))
}
