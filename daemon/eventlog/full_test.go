package eventlog_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/internal/disktest"
)

// TestAppend_FullDisk: writers of one list's log — the daemon's Log, and
// others as taskd commands make them, each its own descriptor — append
// events of every size at once while the file system fills up, and then
// on the full file system. The log holds no torn line: every line read
// back is an event that an Append reported written, and every event
// reported written is there, once.
func TestAppend_FullDisk(t *testing.T) {
	disk := disktest.Small(t, 256<<10)
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

// TestAppend_KeptOnFullDisk: a log that keeps what a full disk refuses
// (KeepFailed, as the daemon's do) writes those events once there is
// room, before the next one, in order, each once; the first append that
// finds room writes them, or else Close. Beyond its limit, an event is
// refused, not kept. A log that keeps nothing (a taskd command's) drops
// the event it could not write.
func TestAppend_KeptOnFullDisk(t *testing.T) {
	tests := []struct {
		name     string
		keep     int
		close    bool // room comes back, then Close instead of an append
		want     []string
		wantKept []bool // per append on the full disk: kept (ErrKept)
	}{
		{"kept, written by the next append", 8, false, []string{"before", "a", "b", "c", "after"}, []bool{true, true, true}},
		{"kept, written by Close", 8, true, []string{"before", "a", "b", "c"}, []bool{true, true, true}},
		{"beyond the limit", 2, false, []string{"before", "a", "b", "after"}, []bool{true, true, false}},
		{"not kept", 0, false, []string{"before", "after"}, []bool{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			disk := disktest.Small(t, 64<<10)
			list := filepath.Join(disk, "l")
			if err := os.MkdirAll(filepath.Join(list, ".taskd"), 0o700); err != nil {
				t.Fatal(err)
			}
			l := eventlog.New(list)
			l.KeepFailed(tt.keep)
			appendTask := func(id string) error { return l.Append(eventlog.Event{Type: "Test", List: "l", Task: id}) }
			if err := appendTask("before"); err != nil {
				t.Fatal(err)
			}
			// The log's page filled, then the disk: the next line needs a
			// page there is none of.
			pad := strings.Repeat("x", 4096)
			if err := l.Append(eventlog.Event{Type: "Pad", List: "l", Data: map[string]any{"pad": pad[:4096-300]}}); err != nil {
				t.Fatal(err)
			}
			filler := filepath.Join(disk, "filler")
			disktest.Fill(t, filler)
			for i, id := range []string{"a", "b", "c"} {
				err := l.Append(eventlog.Event{Type: "Test", List: "l", Task: id, Data: map[string]any{"pad": pad[:400]}})
				if err == nil {
					t.Fatalf("append %s on the full disk: no error", id)
				}
				if got := errors.Is(err, eventlog.ErrKept); got != tt.wantKept[i] {
					t.Errorf("append %s: %v; kept %v, want %v", id, err, got, tt.wantKept[i])
				}
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			if tt.close {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := appendTask("after"); err != nil {
					t.Fatal(err)
				}
				l.Close()
			}
			evs, err := eventlog.Read(list)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range evs {
				if ev.Type == "Test" {
					got = append(got, ev.Task)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("the log holds %q, want %q", got, tt.want)
			}
		})
	}
}

// TestClose_FullDiskSaysWhatIsLost: events kept while the disk is full
// and still not written when the log is closed are dropped, and Close
// says how many.
func TestClose_FullDiskSaysWhatIsLost(t *testing.T) {
	disk := disktest.Small(t, 64<<10)
	list := filepath.Join(disk, "l")
	if err := os.MkdirAll(filepath.Join(list, ".taskd"), 0o700); err != nil {
		t.Fatal(err)
	}
	l := eventlog.New(list)
	l.KeepFailed(8)
	disktest.Fill(t, filepath.Join(disk, "filler"))
	for range 2 {
		if err := l.Append(eventlog.Event{Type: "Test", List: "l"}); !errors.Is(err, eventlog.ErrKept) {
			t.Fatalf("append on the full disk: %v, want it kept", err)
		}
	}
	err := l.Close()
	if err == nil || !strings.Contains(err.Error(), "2 events") {
		t.Errorf("Close = %v, want it to say 2 events are not written", err)
	}
}
