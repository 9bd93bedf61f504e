package daemon

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/taskfile"
)

// TestHandRead: a job the loop starts gets the file as the loop last read
// it, once, as its own parse; not when the file changed after the loop
// acted on it, not while another job worked on the task, not for a job
// that waits for its slot first.
func TestHandRead(t *testing.T) {
	const first = `{"id": "1", "subject": "s", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`
	const second = `{"id": "1", "subject": "t", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`
	tests := []struct {
		name  string
		setup func(t *testing.T, d *Daemon, l *list, e *entry) // after the loop's read
		waits bool
		want  string // the bytes handed, "" for none
	}{
		{name: "as read", want: first},
		{name: "waits for its slot", waits: true},
		{name: "acted on other bytes", setup: func(t *testing.T, d *Daemon, l *list, e *entry) { e.hash++ }},
		{name: "read while a job worked", setup: func(t *testing.T, d *Daemon, l *list, e *entry) {
			write(t, l, second)
			e.job = &work{}
			d.refresh(l, "1")
			e.job = nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, l := servedList(t, nil)
			write(t, l, first)
			d.refresh(l, "1")
			e := l.entries["1"]
			if e == nil || !e.owned {
				t.Fatalf("entry after the read: %+v", e)
			}
			if tt.setup != nil {
				tt.setup(t, d, l, e)
			}
			loops := l.lastRead["1"]
			w := &work{Job: &job.Job{}}
			w.Scope.ID = "1"
			l.handRead("1", e, w, tt.waits)
			got := ""
			if w.Seen != nil {
				got = string(w.Seen.Raw())
			}
			if got != tt.want {
				t.Fatalf("handed %q, want %q", got, tt.want)
			}
			if w.Seen != nil && w.Seen == loops {
				t.Fatal("the job shares the loop's parse")
			}
			again := &work{Job: &job.Job{}}
			l.handRead("1", e, again, false)
			if again.Seen != nil {
				t.Error("a second job was handed the same read")
			}
		})
	}
}

// write replaces task 1 of l with content.
func write(t *testing.T, l *list, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(l.Dir.Path(), "1.json"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestKeepReadBounded: a list keeps at most maxLastReads files as read.
func TestKeepReadBounded(t *testing.T) {
	_, l := servedList(t, nil)
	e := &entry{owned: true}
	for i := range 3 * maxLastReads {
		id := itoa(i + 1)
		tf, err := taskfile.Parse([]byte(`{"id": "`+id+`"}`), id+".json", id)
		if err != nil {
			t.Fatal(err)
		}
		l.keepRead(id, e, tf)
		if n := len(l.lastRead); n > maxLastReads || n == 0 {
			t.Fatalf("after %d reads the list keeps %d", i+1, n)
		}
	}
}
