package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"golang.org/x/sys/unix"
)

// TestPrompt_ReadDirectorySwapped: another process keeps exchanging a
// directory of the task's working directory with a link to a directory
// outside every root, which holds a file of the same name, while tasks
// /read that file. Each read loads the file in the working directory or
// fails; none loads the one outside into a prompt.
func TestPrompt_ReadDirectorySwapped(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	cwd, outside := t.TempDir(), t.TempDir()
	sub, swap := filepath.Join(cwd, "sub"), filepath.Join(cwd, "swap")
	for _, err := range []error{
		os.Mkdir(sub, 0o755),
		os.WriteFile(filepath.Join(sub, "notes.md"), []byte("inside notes"), 0o644),
		os.WriteFile(filepath.Join(outside, "notes.md"), []byte("OUTSIDE SECRET"), 0o644),
		os.Symlink(outside, swap),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
			}
			unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE)
		}
	}()
	defer func() { close(quit); <-done }()
	read, n := 0, 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && n < 200; {
		n++
		id := fmt.Sprint(n)
		h.drop("l", id, execPromptTask("reads", "/read sub/notes.md\n\ntrue", cwd))
		// The check when the task is read may see the link: then it is
		// rejected, and no attempt reads anything.
		note := filepath.Join(h.listDir("l"), ".taskd", "rejected", id+".json.txt")
		rejected := false
		h.waitFor("task "+id+" to end or be rejected", time.Minute, func() bool {
			_, err := os.Stat(note)
			rejected = err == nil
			return rejected || task.Of(h.read("l", id)).Ended()
		})
		if rejected {
			continue
		}
		prompt := string(h.runFile("l", id, 1, "prompt.md"))
		if strings.Contains(prompt, "OUTSIDE SECRET") {
			t.Fatalf("task %d loaded the file outside its roots:\n%s", n, prompt)
		}
		if strings.Contains(prompt, "inside notes") {
			read++
		}
	}
	if read == 0 {
		t.Errorf("none of %d tasks read the file: the test did not test", n)
	}
}
