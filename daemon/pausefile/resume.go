package pausefile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// ErrNotPaused is returned by End for a scope that is not paused and, for
// a profile, paused no task.
var ErrNotPaused = errors.New("not paused")

// errNoPause leaves the file as it is.
var errNoPause = errors.New("no pause")

// Begin records p as the pause of scope s at root, as taskd pause does,
// replacing the one it had.
func Begin(ctx context.Context, root string, s Scope, p Pause, now time.Time) error {
	return Update(ctx, root, now, func(rec *Record) error {
		rec.Set(s, p)
		return nil
	})
}

// Lifted is what End lifted.
type Lifted struct {
	// Scope is what was resumed: a name alone resolved to a list or a
	// profile.
	Scope Scope
	// Held is the pause a person or a budget had set on Scope, if any.
	Held *Pause
	// Limit is the pause a usage limit had put the profile in, if any.
	Limit *Pause
	// Resumed are the tasks the profile's limit paused, made due now
	// (LIST/ID).
	Resumed []string
	// Unreadable says why the file could not be read, when it could
	// not: End replaced it, lifting whatever pause it held.
	Unreadable error
}

// End lifts the pauses of scope s at root before they end by themselves,
// as taskd resume does. A Scope of no Kind names a list if a list of
// that name is paused, else a profile. For a profile it lifts both a
// person's or budget's pause and a usage limit's, and makes every task
// the profile's limit paused due at now (control.EndPause), so that a
// daemon resumes it at once. It returns ErrNotPaused (wrapped) when
// there was nothing to lift. A file that cannot be read (it does not
// parse, or is not a regular file) is replaced, as every write replaces
// it: the daemon holds what it last read of it until then, so a resume
// that left it would lift nothing (Lifted.Unreadable says so).
func End(ctx context.Context, root string, s Scope, now time.Time) (Lifted, error) {
	var l Lifted
	err := Update(ctx, root, now, func(rec *Record) error {
		if _, err := Read(root); err != nil {
			l.Unreadable = err
		}
		if s.Kind == "" {
			s.Kind = Profile
			if _, ok := rec.Lists[s.Name]; ok || l.Unreadable != nil && isList(root, s.Name) {
				s.Kind = List
			}
		}
		if p, ok := rec.Get(s); ok {
			l.Held = &p
			rec.Lift(s)
		}
		if p, ok := rec.Profiles[s.Name]; ok && s.Kind == Profile {
			l.Limit = &p
			delete(rec.Profiles, s.Name)
		}
		if l.Held == nil && l.Limit == nil && l.Unreadable == nil {
			return errNoPause
		}
		return nil
	})
	if s.Kind == "" {
		s.Kind = Profile // the file could not be read: as above
	}
	l.Scope = s
	if err != nil && !errors.Is(err, errNoPause) {
		return l, err
	}
	if s.Kind == Profile {
		resumed, err := endPauses(ctx, root, s.Name, now)
		l.Resumed = resumed
		if err != nil {
			return l, err
		}
	}
	if l.Held == nil && l.Limit == nil && len(l.Resumed) == 0 && l.Unreadable == nil {
		return l, fmt.Errorf("%s is %w, and no task is paused by it", s, ErrNotPaused)
	}
	return l, nil
}

// isList reports whether root has a task list of that name.
func isList(root, name string) bool {
	fi, err := os.Lstat(filepath.Join(root, name))
	return err == nil && fi.IsDir() && !strings.HasPrefix(name, ".")
}

// endPauses makes every task under root that a usage limit of profile
// paused due at now, and returns them (LIST/ID).
func endPauses(ctx context.Context, root, profile string, now time.Time) ([]string, error) {
	entries, err := fsroot.ReadDirectory(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir, err := taskfile.Open(filepath.Join(root, e.Name()))
		if err != nil {
			continue
		}
		ids, _, err := dir.Names()
		if err != nil {
			continue
		}
		for _, id := range ids {
			t, err := dir.Read(id)
			if err != nil || task.Of(t) != task.Paused {
				continue
			}
			if ok, err := control.EndPause(ctx, dir, id, profile, now); err != nil {
				return out, fmt.Errorf("%s/%s: %w", e.Name(), id, err)
			} else if ok {
				out = append(out, e.Name()+"/"+id)
			}
		}
	}
	return out, nil
}
