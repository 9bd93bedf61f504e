//go:build linux

package taskfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// changeTime is path's inode change time.
func changeTime(t *testing.T, path string) time.Time {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Ctim.Unix())
}

// laterThan returns once the kernel's clock for inode times has moved
// past cutoff (it advances by ticks, coarser than time.Now), touching a
// probe file in dir until its change time is after cutoff.
func laterThan(t *testing.T, dir string, cutoff time.Time) {
	t.Helper()
	probe := filepath.Join(dir, "probe")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if changeTime(t, probe).After(cutoff) {
			os.Remove(probe)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("inode times did not pass %v", cutoff)
		}
	}
}

// TestSweep: Sweep removes temporary files and lock directories older
// than their limits, and nothing else — not a temporary name that holds
// a task file's old contents since a write's exchange a moment ago, whose
// modification time is as old as those contents: until its writer has
// checked it, it may be a file another process moved into place, which
// the writer puts back.
func TestSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	write := func(name string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, name := range []string{".7.json123", "..highwatermark99", "7.json", "9.json"} {
		write(name)
	}
	for _, name := range []string{"7.json.lock", "8.json.lock"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(filepath.Join(dir, "7.json.lock"), old, old) // 8's is held right now
	// Everything so far changed at or before cutoff; what follows, after.
	cutoff := changeTime(t, filepath.Join(dir, "9.json"))
	laterThan(t, dir, cutoff)
	fresh := filepath.Join(dir, ".8.json789")
	os.WriteFile(fresh, []byte("{}"), 0o600) // a writer's new contents, not yet in place
	exchanged := filepath.Join(dir, ".9.json456")
	os.WriteFile(exchanged, []byte(`{"id":"9"}`), 0o600)
	if err := exchange(exchanged, filepath.Join(dir, "9.json")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(exchanged); !fi.ModTime().Before(cutoff) {
		t.Fatalf("the exchanged-out file's modification time is %v, want the old contents' (before %v)", fi.ModTime(), cutoff)
	}

	removed, err := d.sweep(cutoff.Add(time.Nanosecond), old.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(removed, " "), "..highwatermark99 .7.json123 7.json.lock"; got != want {
		t.Errorf("sweep removed %q, want %q", got, want)
	}
	for _, name := range []string{".8.json789", ".9.json456", "7.json", "9.json", "8.json.lock"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v, want it kept", name, err)
		}
	}
}
