package eventlog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/taskd/taskd/daemon/eventlog"
)

// A log with a rotation keeps at most Keep rotated files besides the
// current one, none much past the limit, and Read returns what is kept in
// the order it was written.
func TestRotation(t *testing.T) {
	for _, keep := range []int{0, 1, 3} {
		t.Run(fmt.Sprint("keep", keep), func(t *testing.T) {
			list := t.TempDir()
			l := eventlog.New(list)
			defer l.Close()
			const limit = 2000
			l.SetRotation(eventlog.Rotation{MaxBytes: limit, Keep: keep})
			const n = 200
			for i := range n {
				if err := l.Append(eventlog.Event{Type: eventlog.TaskAccepted, List: "l", Task: fmt.Sprintf("t%03d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			files := eventlog.Files(list)
			if got, want := len(files), keep+1; got > want {
				t.Errorf("%d files %v, want at most %d", got, files, want)
			}
			for _, f := range files {
				fi, err := os.Stat(filepath.Join(list, ".taskd", f))
				if err == nil && fi.Size() > limit+200 {
					t.Errorf("%s holds %d bytes, past the limit of %d by more than a line", f, fi.Size(), limit)
				}
			}
			evs, err := eventlog.Read(list)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 0 || evs[len(evs)-1].Task != "t199" {
				t.Fatalf("read %d events, want the last one t199", len(evs))
			}
			ids := make([]string, len(evs))
			for i, ev := range evs {
				ids[i] = ev.Task
			}
			if !slices.IsSorted(ids) {
				t.Errorf("events out of order: %v", ids)
			}
			if len(evs) == n {
				t.Errorf("nothing was dropped from %d events", n)
			}
		})
	}
}

// Without a rotation the log grows; Rotate by hand moves it aside and
// drops files past keep, whatever their numbers.
func TestRotateByHand(t *testing.T) {
	list := t.TempDir()
	l := eventlog.New(list)
	for i := range 3 {
		l.Append(eventlog.Event{Type: eventlog.TaskAccepted, Task: fmt.Sprint(i)})
	}
	l.Close()
	os.WriteFile(filepath.Join(list, ".taskd", "events.jsonl.10"), []byte("{}\n"), 0o600)
	if err := eventlog.Rotate(list, 2); err != nil {
		t.Fatal(err)
	}
	got := eventlog.Files(list)
	want := []string{"events.jsonl.1", "events.jsonl"}
	if !slices.Equal(got, want) {
		t.Errorf("files = %v, want %v", got, want)
	}
	evs, err := eventlog.Read(list)
	if err != nil || len(evs) != 3 {
		t.Errorf("read %d events (%v), want 3", len(evs), err)
	}
}
