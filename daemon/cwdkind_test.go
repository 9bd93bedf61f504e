package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
)

// TestCwd_NotADirectory: a task whose working directory is there but is
// no directory (a FIFO, a regular file, a link that loops) fails at once
// saying what is there, not that it does not exist; one that is missing
// says that. Nothing waits on the FIFO.
func TestCwd_NotADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo, file, loop := filepath.Join(dir, "fifo"), filepath.Join(dir, "file"), filepath.Join(dir, "loop")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	h := startDaemon(t, []string{"l"})
	for i, c := range []struct{ cwd, want string }{
		{fifo, "is a FIFO (named pipe), not a directory"},
		{file, "is a regular file, not a directory"},
		{loop, "too many levels of symbolic links"},
		{filepath.Join(dir, "gone"), "does not exist"},
	} {
		id := string(rune('1' + i))
		h.drop("l", id, execTask("cwd", "true", "taskd.cwd", `"`+c.cwd+`"`))
		tf := h.waitEnded("l", id, time.Minute)
		e, _ := tf.Metadata.Object("taskd").String("error")
		if task.Of(tf) != task.Failed || !strings.Contains(e, c.want) || !strings.Contains(e, c.cwd) {
			t.Errorf("working directory %s: the task is %s with error %q, want failed saying %q", c.cwd, task.Of(tf), e, c.want)
		}
	}
}
