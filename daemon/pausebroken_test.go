package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/task"
)

// TestPause_ResumeUnreadableFile: a list paused, then its pause file made
// unreadable by hand (cut short, a FIFO, a link): the daemon holds the
// pause it last read, and taskd resume (pausefile.End) of the list lifts
// it — it replaces the file, as every write does — without blocking on
// the FIFO or following the link. Before, the resume found nothing paused
// in what it could not read and refused, and the task stayed held.
func TestPause_ResumeUnreadableFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		spoil func(path string) error
	}{
		{"cut short", func(path string) error { return os.WriteFile(path, []byte(`{"lists": {"l": `), 0o600) }},
		{"fifo", func(path string) error {
			if err := syscall.Mkfifo(path+".new", 0o600); err != nil {
				return err
			}
			return os.Rename(path+".new", path) // never absent: an absent file is no pause
		}},
		{"link", func(path string) error {
			elsewhere := filepath.Join(filepath.Dir(path), "elsewhere.json")
			if err := os.WriteFile(elsewhere, []byte(`{"lists": {"l": {"reason": "x", "by": "taskd pause", "since": "2026-01-01T00:00:00Z"}}}`), 0o600); err != nil {
				return err
			}
			if err := os.Symlink(elsewhere, path+".new"); err != nil {
				return err
			}
			return os.Rename(path+".new", path)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startDaemon(t, []string{"l"})
			ctx := context.Background()
			if err := pausefile.Begin(ctx, h.root, pausefile.Scope{Kind: pausefile.List, Name: "l"}, pausefile.Pause{By: pausefile.ByPerson, Reason: "demo", Since: time.Now()}, time.Now()); err != nil {
				t.Fatal(err)
			}
			h.waitFor("the pause to be read", 10*time.Second, func() bool { return strings.Contains(h.logs.String(), `msg=paused what="list l"`) })
			if err := tt.spoil(pausefile.Path(h.root)); err != nil {
				t.Fatal(err)
			}
			h.waitFor("the unreadable file to be read", 10*time.Second, func() bool { return strings.Contains(h.logs.String(), `msg="read the pause file"`) })
			h.drop("l", "1", execTask("held", "true"))
			h.waitFor("task 1 held back", 10*time.Second, func() bool { return h.heldBack("l", "1") })

			l, err := pausefile.End(ctx, h.root, pausefile.Scope{Name: "l"}, time.Now())
			if err != nil {
				t.Fatalf("resume l: %v", err)
			}
			if l.Unreadable == nil || l.Scope != (pausefile.Scope{Kind: pausefile.List, Name: "l"}) {
				t.Errorf("resume l: %+v, want the list, and why its file could not be read", l)
			}
			h.waitState("l", "1", task.Succeeded, 20*time.Second)
			if fi, err := os.Lstat(pausefile.Path(h.root)); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the pause file after the resume: %v, %v", fi, err)
			}
		})
	}
}
