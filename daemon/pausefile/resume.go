package pausefile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// ErrNotPaused is returned by Resume for a profile that is not paused and
// paused no task.
var ErrNotPaused = errors.New("not paused")

// errNoPause leaves the file as it is.
var errNoPause = errors.New("no pause")

// Resume lifts the pause of profile at root before it ends by itself, as
// taskd resume does: the profile's pause leaves the file, so that the
// tasks it held may start, and every task a usage limit of the profile
// paused is made due at now (control.EndPause), so that a daemon resumes
// it at once. It returns the pause lifted (nil when the file held none)
// and the tasks made due (LIST/ID); ErrNotPaused when there was neither.
func Resume(ctx context.Context, root, profile string, now time.Time) (*Pause, []string, error) {
	var lifted *Pause
	err := Update(ctx, root, now, func(rec *Record) error {
		p, ok := rec.Profiles[profile]
		if !ok {
			return errNoPause
		}
		lifted = &p
		delete(rec.Profiles, profile)
		return nil
	})
	if err != nil && !errors.Is(err, errNoPause) {
		return nil, nil, err
	}
	resumed, err := endPauses(ctx, root, profile, now)
	if err != nil {
		return lifted, resumed, err
	}
	if lifted == nil && len(resumed) == 0 {
		return nil, nil, fmt.Errorf("profile %s is %w, and no task is paused by it", profile, ErrNotPaused)
	}
	return lifted, resumed, nil
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
