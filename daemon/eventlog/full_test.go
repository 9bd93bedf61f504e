package eventlog_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/taskd/taskd/daemon/eventlog"
)

// smallDisk mounts a tmpfs of size bytes at a new directory, unmounted
// when the test ends; without root, or where the mount fails, the test is
// skipped, saying why.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: mounting a small file system needs root")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("skipping: cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestAppend_FullDisk: writers of one list's log — the daemon's Log, and
// others as taskd commands make them, each its own descriptor — append
// events of every size at once while the file system fills up, and then
// on the full file system. The log holds no torn line: every line read
// back is an event that an Append reported written, and every event
// reported written is there, once.
func TestAppend_FullDisk(t *testing.T) {
	disk := smallDisk(t, 256<<10)
	list := filepath.Join(disk, "l")
	if err := os.MkdirAll(filepath.Join(list, ".taskd"), 0o700); err != nil {
		t.Fatal(err)
	}
	// Most of the room taken, in pieces: the log fills the rest, and fills
	// it again each time a piece is removed.
	const pieces = 24
	for i := range pieces {
		if err := os.WriteFile(filepath.Join(disk, fmt.Sprint("filler", i)), make([]byte, 8<<10), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	freed := make(chan struct{})
	go func() {
		defer close(freed)
		for i := range pieces {
			select {
			case <-done:
				return
			default:
			}
			os.Remove(filepath.Join(disk, fmt.Sprint("filler", i)))
			for range 200 { // let the writers fill it again
				if _, err := os.Stat(filepath.Join(disk, "probe")); err != nil {
					runtime.Gosched()
				}
			}
		}
	}()
	shared := eventlog.New(list)
	defer shared.Close()
	const writers, each = 8, 2000
	var mu sync.Mutex
	written := map[string]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			own := eventlog.New(list) // a taskd command's: a descriptor of its own
			defer own.Close()
			for i := range each {
				l := shared
				if i%2 == 1 {
					l = own
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				pad := strings.Repeat("x", (i*37+w*101)%3000) // lines of 100 B to 3 kB
				if err := l.Append(eventlog.Event{Type: "Test", List: "l", Task: id, Data: map[string]any{"pad": pad}}); err == nil {
					mu.Lock()
					written[id] = true
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(done)
	<-freed
	if len(written) == writers*each {
		t.Fatal("every event was written: the file system never filled up")
	}
	evs, err := eventlog.Read(list)
	if err != nil {
		data, _ := os.ReadFile(filepath.Join(list, ".taskd", "events.jsonl"))
		t.Fatalf("the log does not read back (%d events before the error): %v\n%q", len(evs), err, tornContext(data))
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		switch {
		case !written[ev.Task]:
			t.Errorf("event %s is in the log, but its Append failed", ev.Task)
		case seen[ev.Task]:
			t.Errorf("event %s is in the log twice", ev.Task)
		}
		seen[ev.Task] = true
	}
	for id := range written {
		if !seen[id] {
			t.Errorf("event %s was reported written but is not in the log", id)
		}
	}
	t.Logf("%d of %d events written before the file system was full", len(written), writers*each)
}

// tornContext returns the lines around the first that does not parse.
func tornContext(data []byte) []byte {
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 && !bytes.HasSuffix(bytes.TrimSpace(line), []byte("}")) {
			return line[max(0, len(line)-200):]
		}
	}
	return nil
}
