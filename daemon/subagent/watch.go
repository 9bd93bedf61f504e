package subagent

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// dirWatch wakes a waiter when task files of one list directory change.
type dirWatch struct {
	w *fsnotify.Watcher
}

func newDirWatch(dir string) (*dirWatch, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, err
	}
	return &dirWatch{w: w}, nil
}

// next waits for a change to the file of one of ids (or a lost event, which
// might have been one). It returns ctx's error when ctx ends first.
func (dw *dirWatch) next(ctx context.Context, ids []string) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-dw.w.Events:
			if !ok {
				return errors.New("file watcher closed")
			}
			if id, ok := strings.CutSuffix(filepath.Base(ev.Name), ".json"); ok && slices.Contains(ids, id) {
				return nil
			}
		case err, ok := <-dw.w.Errors:
			if !ok {
				return errors.New("file watcher closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				return nil // look again: the change may be among the lost events
			}
			return err
		}
	}
}

// Close stops watching.
func (dw *dirWatch) Close() error { return dw.w.Close() }
