package pausefile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/pausefile"
)

// TestUpdate: a pause is written, read back, and left out once it has
// ended; a pause until lifted stays. Which tasks a pause holds follows
// the agent names it records.
func TestUpdate(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	if r, err := pausefile.Read(root); err != nil || len(r.Profiles) != 0 {
		t.Fatalf("no file: %+v, %v", r, err)
	}
	err := pausefile.Update(ctx, root, now, func(r *pausefile.Record) error {
		r.Profiles = map[string]pausefile.Pause{
			"claude": {Reason: "limit", By: pausefile.ByLimit, Since: now, Until: now.Add(time.Hour), Agents: []string{"claude", "builder"}, Default: true},
			"codex":  {Reason: "limit", By: pausefile.ByLimit, Since: now, Until: now.Add(time.Minute)},
			"held":   {Reason: "until lifted", By: "person", Since: now},
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	later := now.Add(2 * time.Minute)
	if err := pausefile.Update(ctx, root, later, func(*pausefile.Record) error { return nil }); err != nil {
		t.Fatal(err)
	}
	r, err := pausefile.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Profiles["codex"]; ok || len(r.Profiles) != 2 {
		t.Errorf("after its end the file keeps %+v", r.Profiles)
	}
	c := r.Profiles["claude"]
	for _, tt := range []struct {
		agent string
		at    time.Time
		want  bool
	}{{"", later, true}, {"builder", later, true}, {"exec", later, false}, {"claude", now.Add(2 * time.Hour), false}} {
		if got := c.Holds(tt.agent, tt.at); got != tt.want {
			t.Errorf("Holds(%q, %v) = %v, want %v", tt.agent, tt.at, got, tt.want)
		}
	}
	if fi, err := os.Stat(pausefile.Path(root)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file: %v, %v; want mode 0600", fi, err)
	}

	// A link where the lock goes is refused, not followed.
	outside := filepath.Join(t.TempDir(), "elsewhere")
	os.Remove(filepath.Join(root, pausefile.LockName))
	os.Symlink(outside, filepath.Join(root, pausefile.LockName))
	if err := pausefile.Update(ctx, root, later, func(*pausefile.Record) error { return nil }); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Update with a linked lock: %v", err)
	}
	if _, err := os.Lstat(outside); err == nil {
		t.Errorf("the lock was made through the link")
	}
}
