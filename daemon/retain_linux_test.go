package daemon_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/internal/clock"
)

// TestRetention_FromWhatTheLoopKnows: the daemon's retention pass at
// start removes the files of tasks that ended longer ago than the policy
// keeps them and keeps those a task that has not ended needs, without
// opening the file of any ended task it keeps: the kernel (inotify)
// reports each such file opened once from before the start, by the
// loop's scan, and no more. A task that ended, and was started again
// while the pass held what the loop knew of it as ended, is kept: its
// file is read again under its lock, held meanwhile by Claude Code's own
// lock (proper-lockfile).
func TestRetention_FromWhatTheLoopKnows(t *testing.T) {
	t.Parallel()
	node := nodeToolsDir(t)
	day := 24 * time.Hour
	t0 := time.Now().Truncate(time.Second)
	h := newHarness(t, filepath.Join(t.TempDir(), "tasks"), []string{"l"}, "", func(fc *config.FileConfig) {
		fc.Retention = &config.RetentionSpec{SucceededTasks: "7d", FailedTasks: "30d"}
		fc.Rescan = "24h" // no safety rescan reads the files meanwhile
	})
	h.clock = clock.NewFake(t0)
	list := h.listDir("l")
	ended := func(state string, age time.Duration) string {
		return execTask(state, "true", "status", `"completed"`, "taskd.state", `"`+state+`"`,
			"taskd.finishedAt", `"`+t0.Add(-age).UTC().Format(time.RFC3339)+`"`)
	}
	files := map[string]string{
		"gone":       ended("succeeded", 8*day),
		"blocker":    ended("succeeded", 8*day), // as old, but waiting needs it
		"person":     `{"subject": "a person's task", "status": "pending"}`,
		"waiting":    execTask("waiting", "true", "blockedBy", `["blocker", "person"]`),
		"recent":     ended("succeeded", day),
		"failed":     ended("failed", 8*day), // failed tasks are kept 30 days
		"zrestarted": ended("succeeded", 8*day),
	}
	for id, data := range files {
		if err := os.WriteFile(filepath.Join(list, id+".json"), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(id string) bool {
		_, err := os.Lstat(filepath.Join(list, id+".json"))
		return !errors.Is(err, os.ErrNotExist)
	}
	opens := watchOpens(t, list)
	// The pass goes in id order: it removes gone, then waits for
	// zrestarted's lock.
	lock := holdClaudeLock(t, node, filepath.Join(list, "zrestarted.json"))
	h.start()
	t.Cleanup(h.stop)
	h.waitFor("gone removed", 10*time.Second, func() bool { return !exists("gone") })
	// The pass knew zrestarted as ended; it is started again, by a
	// writer holding its lock, before the pass can take it.
	h.drop("l", "zrestarted", execTask("started again", "true", "blockedBy", `["person"]`))
	lock.unlock()
	h.waitFor("the pass done", 10*time.Second, func() bool { return strings.Contains(h.logs.String(), "retention: pass done") })
	h.stop()

	for id, want := range map[string]bool{"gone": false, "blocker": true, "person": true, "waiting": true, "recent": true, "failed": true, "zrestarted": true} {
		if got := exists(id); got != want {
			t.Errorf("task %s there: %v, want %v", id, got, want)
		}
	}
	got := opens.counts(t)
	for _, id := range []string{"blocker", "recent", "failed"} {
		if n := got[id+".json"]; n != 1 {
			t.Errorf("the file of ended task %s, kept, was opened %d times, want once (the loop's scan): opens %v", id, n, got)
		}
	}
	if got["waiting.json"] < 2 {
		t.Errorf("the file of waiting, not ended, was opened %d times, want it read by the scan and for what it needs: opens %v", got["waiting.json"], got)
	}
}

// fileOpens counts the opens of the files of a directory, as the kernel
// reports them (inotify).
type fileOpens struct{ fd int }

// watchOpens starts counting the opens of the files in dir.
func watchOpens(t *testing.T, dir string) *fileOpens {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	return &fileOpens{fd: fd}
}

// counts returns the opens reported since watchOpens, by file name.
func (o *fileOpens) counts(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(o.fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			size := int(binary.NativeEndian.Uint32(buf[off+12:]))
			if mask&unix.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify lost events")
			}
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+size]), "\x00")
			if name != "" {
				out[name]++
			}
			off += unix.SizeofInotifyEvent + size
		}
	}
}
