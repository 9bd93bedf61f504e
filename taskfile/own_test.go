package taskfile_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

// TestDir_Own: a Dir that remembers its writes gives back the task as its
// last write left it, as often as asked, while the file is the one that
// write made; after a write in place (same inode, as Claude Code writes),
// a file renamed over it, or the file removed, the caller reads the file,
// then and from then on.
func TestDir_Own(t *testing.T) {
	ctx := context.Background()
	const id = "1"
	tests := []struct {
		name    string
		after   func(t *testing.T, path string)
		inPlace bool // the caller saw a write in place
		want    bool
	}{
		{name: "untouched", want: true},
		{name: "write in place seen", inPlace: true},
		{name: "write in place, other size", after: func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(`{"id": "1", "subject": "theirs", "status": "pending", "blocks": [], "blockedBy": []}`)
			f.Close()
		}},
		{name: "renamed over", after: func(t *testing.T, path string) {
			data, _ := os.ReadFile(path)
			tmp := filepath.Join(filepath.Dir(path), ".other")
			if err := os.WriteFile(tmp, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "removed", after: func(t *testing.T, path string) { os.Remove(path) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpen(t)
			d.RememberWrites()
			path := writeRaw(t, d, id+".json", `{"id": "1", "subject": "s", "status": "pending", "blocks": [], "blockedBy": []}`)
			wrote, err := d.Update(ctx, id, func(t *taskfile.Task) error { t.Subject = "ours"; return nil })
			if err != nil {
				t.Fatal(err)
			}
			if tt.after != nil {
				tt.after(t, path)
			}
			got, ok := d.Own(id, tt.inPlace)
			if ok != tt.want {
				t.Fatalf("Own: ok %v, want %v", ok, tt.want)
			}
			if ok && string(got.Raw()) != string(wrote.Raw()) {
				t.Errorf("Own gave %s, want what the write left: %s", got.Raw(), wrote.Raw())
			}
			if _, again := d.Own(id, false); again != tt.want {
				t.Errorf("Own asked again: ok %v, want %v", again, tt.want)
			}
		})
	}

	// A Dir that does not remember its writes never answers.
	d := mustOpen(t)
	writeRaw(t, d, id+".json", `{"id": "1", "subject": "s", "status": "pending", "blocks": [], "blockedBy": []}`)
	if _, err := d.Update(ctx, id, func(t *taskfile.Task) error { t.Subject = "ours"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Own(id, false); ok {
		t.Error("Own answered for a Dir that does not remember its writes")
	}
}

// TestDir_Own_Copies: the task Own and UpdateFrom give from a remembered
// write is the caller's own: a change to one (a field, the metadata, a
// metadata key in place) is seen neither by the next Own nor by an update
// from the same bytes, each of which gives the task as the file holds it.
func TestDir_Own_Copies(t *testing.T) {
	ctx := context.Background()
	d := mustOpen(t)
	d.RememberWrites()
	writeRaw(t, d, "1.json", `{"id": "1", "subject": "s", "status": "pending", "blocks": ["2"], "blockedBy": [], "extra": {"k": [1]}, "metadata": {"taskd": {"state": "queued"}}}`)
	wrote, err := d.Update(ctx, "1", func(t *taskfile.Task) error { t.Subject = "ours"; return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := string(wrote.Raw())
	change := func(t *taskfile.Task) {
		t.Subject = "changed"
		t.Blocks[0] = "3"
		t.Metadata.Object("taskd").Set("state", "running")
		t.EnsureMetadata().Set("added", true)
	}
	for i := range 3 {
		got, ok := d.Own("1", false)
		if !ok {
			t.Fatalf("Own %d: not answered", i)
		}
		if m := string(got.Marshal()); m != want {
			t.Fatalf("Own %d gave\n%s\nwant\n%s", i, m, want)
		}
		change(got)
	}
	for i := range 2 {
		var saw string
		if _, err := d.UpdateFrom(ctx, wrote, func(t *taskfile.Task) error {
			saw = string(t.Marshal())
			change(t)
			return errors.New("no write")
		}); err == nil {
			t.Fatal("UpdateFrom: want the update's error")
		}
		if saw != want {
			t.Fatalf("UpdateFrom %d started from\n%s\nwant\n%s", i, saw, want)
		}
	}
	if got, _ := d.Own("1", false); string(got.Marshal()) != want {
		t.Errorf("Own after the updates gave %s, want %s", got.Marshal(), want)
	}
}
