package taskfile_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

// mustOpen creates a list directory under a temp dir and opens it.
func mustOpen(t testing.TB) *taskfile.Dir {
	t.Helper()
	d, err := taskfile.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeRaw(t testing.TB, d *taskfile.Dir, name, content string) string {
	t.Helper()
	p := filepath.Join(d.Path(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const roundTripIn = `{
  "id": "7",
  "subject": "Übersetze die Datei ✨",
  "x-origin": {"tool": "hand", "tags": ["a", "b"], "n": 1.50},
  "description": "line one\nline two \u2028 <tag> & done",
  "activeForm": "Translating",
  "status": "pending",
  "owner": "taskd",
  "blocks": [],
  "blockedBy": [],
  "metadata": {
    "priority": 4,
    "custom": {"deep": {"deeper": [null, true, "日本語"]}},
    "taskd": {"prompt": "echo hi", "unknownKnob": {"keep": "me"}}
  },
  "trailing": null
}`

func TestDir_UpdateRoundTrip(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	writeRaw(t, d, "7.json", roundTripIn)
	ctx := context.Background()
	got, err := d.Update(ctx, "7", func(task *taskfile.Task) error {
		task.Status = taskfile.StatusInProgress
		task.Metadata.Object("taskd").Set("state", "running")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != taskfile.StatusInProgress {
		t.Errorf("returned status = %q", got.Status)
	}
	data, err := os.ReadFile(d.File("7"))
	if err != nil {
		t.Fatal(err)
	}
	// The expected file: the input re-laid-out, with exactly the two changes.
	in, _ := taskfile.ParseValue([]byte(roundTripIn))
	want := in.(*taskfile.Object)
	want.Set("status", "in_progress")
	want.Object("metadata").Object("taskd").Set("state", "running")
	if got, want := string(data), string(taskfile.MarshalIndent(want)); got != want {
		t.Errorf("file after Update\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(string(data), `"n": 1.50`) || !strings.Contains(string(data), "\u2028") {
		t.Errorf("number literal or raw U+2028 not preserved:\n%s", data)
	}
}

func TestDir_UpdateUnchangedSkipsWrite(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	task, err := d.Create(context.Background(), &taskfile.Task{Subject: "s", Owner: "taskd"})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(d.File(task.ID))
	if _, err := d.Update(context.Background(), task.ID, func(*taskfile.Task) error { return nil }); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(d.File(task.ID))
	if !os.SameFile(before, after) {
		t.Errorf("an update without changes replaced the file")
	}
}

func TestDir_UpdateFnError(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	writeRaw(t, d, "3.json", `{"id": "3", "subject": "s"}`)
	sentinel := errors.New("no thanks")
	_, err := d.Update(context.Background(), "3", func(task *taskfile.Task) error {
		task.Subject = "changed"
		return sentinel
	})
	if !errors.Is(err, sentinel) {
		t.Fatalf("Update error = %v, want %v", err, sentinel)
	}
	if data, _ := os.ReadFile(d.File("3")); string(data) != `{"id": "3", "subject": "s"}` {
		t.Errorf("file changed after fn failed: %s", data)
	}
	if _, err := os.Stat(d.File("3") + ".lock"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock directory left behind: %v", err)
	}
}

func TestDir_UpdateMissing(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	_, err := d.Update(context.Background(), "404", func(*taskfile.Task) error { return nil })
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Update of a missing task: %v, want fs.ErrNotExist", err)
	}
	_, err = d.Update(context.Background(), "../x", func(*taskfile.Task) error { return nil })
	if !errors.Is(err, taskfile.ErrInvalidID) {
		t.Fatalf("Update of ../x: %v, want ErrInvalidID", err)
	}
}

// TestDir_BadFilesUntouched checks every kind of bad file: Read and Update
// return the documented error and the file (or link, or FIFO) is unchanged.
func TestDir_BadFilesUntouched(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	outside := filepath.Join(t.TempDir(), "outside.json")
	os.WriteFile(outside, []byte(`{"id": "link"}`), 0o644)
	cases := []struct {
		id   string
		make func(path string)
		kind error
	}{
		{"badjson", func(p string) { os.WriteFile(p, []byte(`{"id": "badjson",`), 0o644) }, taskfile.ErrInvalidJSON},
		{"array", func(p string) { os.WriteFile(p, []byte(`["x"]`), 0o644) }, taskfile.ErrNotObject},
		{"huge", func(p string) {
			os.WriteFile(p, append([]byte(`{"x": "`), bytes.Repeat([]byte("a"), taskfile.MaxSize+10)...), 0o644)
		}, taskfile.ErrTooLarge},
		{"link", func(p string) { os.Symlink(outside, p) }, taskfile.ErrSymlink},
		{"fifo", func(p string) { syscall.Mkfifo(p, 0o644) }, taskfile.ErrNotRegular},
		{"subdir", func(p string) { os.Mkdir(p, 0o755) }, taskfile.ErrNotRegular},
		{"socket", func(p string) {
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Fatal(err)
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			l.Close()
		}, taskfile.ErrNotRegular},
		{"mismatch", func(p string) { os.WriteFile(p, []byte(`{"id": "other"}`), 0o644) }, taskfile.ErrIDMismatch},
		{"wrongtype", func(p string) { os.WriteFile(p, []byte(`{"blockedBy": [1]}`), 0o644) }, taskfile.ErrWrongType},
		{"binary", func(p string) { os.WriteFile(p, []byte{0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d}, 0o644) }, taskfile.ErrInvalidJSON},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			p := d.File(c.id)
			c.make(p)
			before := snapshot(t, p)
			_, err := d.Read(c.id)
			var bad *taskfile.BadFileError
			if !errors.As(err, &bad) || !errors.Is(err, c.kind) {
				t.Fatalf("Read error = %v, want a *BadFileError of kind %v", err, c.kind)
			}
			if !strings.HasPrefix(err.Error(), p+": ") || bad.Fix == "" {
				t.Errorf("error %q does not name the file or lacks a fix (%q)", err, bad.Fix)
			}
			called := false
			_, err = d.Update(context.Background(), c.id, func(*taskfile.Task) error { called = true; return nil })
			if !errors.Is(err, c.kind) || called {
				t.Errorf("Update error = %v (fn called: %v), want kind %v", err, called, c.kind)
			}
			if after := snapshot(t, p); after != before {
				t.Errorf("file changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	if data, _ := os.ReadFile(outside); string(data) != `{"id": "link"}` {
		t.Errorf("symlink target changed: %s", data)
	}
}

// snapshot describes a path without following links: type, mode, size,
// mtime and contents of regular files.
func snapshot(t testing.TB, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	s := fi.Mode().String() + " " + fi.ModTime().String()
	if fi.Mode().IsRegular() {
		data, _ := os.ReadFile(p)
		s += " " + string(data)
	}
	return s
}

func TestDir_List(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	for _, n := range []string{"10.json", "9.json", "b.json", "a_1.json", ".7.json123", "x.tmp", "7.json.lock", ".lock", ".highwatermark", "bad name.json"} {
		writeRaw(t, d, n, "{}")
	}
	got, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(got, " "), "9 10 a_1 b"; got != want {
		t.Errorf("List = %s, want %s", got, want)
	}
}

func TestDir_CreateAllocatesLikeClaudeCode(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	ctx := context.Background()
	writeRaw(t, d, "4.json", `{"id": "4"}`)
	writeRaw(t, d, ".highwatermark", "11\n")
	task, err := d.Create(ctx, &taskfile.Task{Subject: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "12" {
		t.Errorf("id = %s, want 12 (one more than .highwatermark)", task.ID)
	}
	writeRaw(t, d, "30.json", `{"id": "30"}`)
	task, err = d.Create(ctx, &taskfile.Task{Subject: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "31" {
		t.Errorf("id = %s, want 31 (one more than the largest file)", task.ID)
	}
	if hw, _ := os.ReadFile(filepath.Join(d.Path(), ".highwatermark")); string(hw) != "31" {
		t.Errorf(".highwatermark = %q, want 31", hw)
	}
	data, _ := os.ReadFile(d.File("31"))
	want := "{\n  \"id\": \"31\",\n  \"subject\": \"second\",\n  \"description\": \"\",\n  \"activeForm\": \"\",\n  \"status\": \"pending\",\n  \"blocks\": [],\n  \"blockedBy\": []\n}"
	if string(data) != want {
		t.Errorf("created file\n got %s\nwant %s", data, want)
	}
	// A named task never replaces an existing file.
	_, err = d.Create(ctx, &taskfile.Task{ID: "30", Subject: "clobber"})
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over an existing file: %v, want fs.ErrExist", err)
	}
	if data, _ := os.ReadFile(d.File("30")); string(data) != `{"id": "30"}` {
		t.Errorf("existing file replaced: %s", data)
	}
}

// TestDir_Swap: Swap replaces the file only while it holds the expected
// bytes; otherwise it reports ErrChanged (or fs.ErrNotExist) and leaves the
// file alone.
func TestDir_Swap(t *testing.T) {
	t.Parallel()
	dir, err := taskfile.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := dir.File("1")
	first := []byte(`{"id":"1","subject":"a"}`)
	second := []byte(`{"id":"1","subject":"b"}`)
	if err := os.WriteFile(path, first, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := dir.Swap(t.Context(), "1", first, second); err != nil {
		t.Fatalf("Swap with the right bytes: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(second) {
		t.Errorf("after Swap the file holds %s, want %s", got, second)
	}
	if err := dir.Swap(t.Context(), "1", first, first); !errors.Is(err, taskfile.ErrChanged) {
		t.Errorf("Swap with stale bytes = %v, want ErrChanged", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(second) {
		t.Errorf("a refused Swap changed the file to %s", got)
	}
	if err := dir.Swap(t.Context(), "2", first, second); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Swap of a missing file = %v, want fs.ErrNotExist", err)
	}
}

// TestDir_UpdateFrom: an update from the task as its caller saw it is
// applied to the file as it is: from the bytes seen when the file still
// holds them, from the file when another writer changed it since (that
// writer's change kept); the task seen is not changed either way.
func TestDir_UpdateFrom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		otherWriter bool
		want        []string // the subject's words after the update
	}{
		{"file as seen", false, []string{"seen", "updated"}},
		{"file changed since", true, []string{"seen", "other", "updated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustOpen(t)
			writeRaw(t, d, "3.json", `{"id": "3", "subject": "seen", "status": "pending", "blocks": [], "blockedBy": []}`)
			seen, err := d.Read("3")
			if err != nil {
				t.Fatal(err)
			}
			if tc.otherWriter {
				if _, err := d.Update(ctx, "3", func(t *taskfile.Task) error { t.Subject += " other"; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			calls := 0
			got, err := d.UpdateFrom(ctx, seen, func(t *taskfile.Task) error {
				calls++
				t.Subject += " updated"
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			onDisk, err := d.Read("3")
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Join(tc.want, " "); got.Subject != want || onDisk.Subject != want {
				t.Errorf("subject returned %q, on disk %q, want %q", got.Subject, onDisk.Subject, want)
			}
			if seen.Subject != "seen" {
				t.Errorf("the task seen was changed: subject %q", seen.Subject)
			}
			if wantCalls := 1 + len(tc.want) - 2; calls != wantCalls {
				t.Errorf("fn called %d times, want %d", calls, wantCalls)
			}
		})
	}
}

// TestDir_UpdateFromUnchanged: an update that changes nothing of the task
// seen returns the file as it is, not the bytes seen.
func TestDir_UpdateFromUnchanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	writeRaw(t, d, "4.json", `{"id": "4", "subject": "seen", "status": "pending", "blocks": [], "blockedBy": []}`)
	seen, err := d.Read("4")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Update(ctx, "4", func(t *taskfile.Task) error { t.Subject = "changed"; return nil }); err != nil {
		t.Fatal(err)
	}
	got, err := d.UpdateFrom(ctx, seen, func(*taskfile.Task) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got.Subject != "changed" {
		t.Errorf("subject returned %q, want the file's %q", got.Subject, "changed")
	}
}
