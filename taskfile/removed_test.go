package taskfile_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/taskd/taskd/taskfile"
)

// TestDir_WriteKeepsARemovalMadeWithoutLocks: a task file removed by a
// writer that takes no lock (a person's rm) in the moment between a
// write's check of the file, under the locks, and its new contents
// taking the file's place stays removed: the write fails as for a file
// that is gone, and leaves nothing behind in the list directory.
func TestDir_WriteKeepsARemovalMadeWithoutLocks(t *testing.T) {
	t.Parallel()
	const task = `{"id":"1","subject":"a","status":"pending"}`
	for _, tt := range []struct {
		name  string
		write func(ctx context.Context, d *taskfile.Dir) error
	}{
		{"Update", func(ctx context.Context, d *taskfile.Dir) error {
			_, err := d.Update(ctx, "1", func(t *taskfile.Task) error { t.Subject = "b"; return nil })
			return err
		}},
		{"UpdateFrom", func(ctx context.Context, d *taskfile.Dir) error {
			seen, err := d.Read("1")
			if err != nil {
				return err
			}
			_, err = d.UpdateFrom(ctx, seen, func(t *taskfile.Task) error { t.Subject = "b"; return nil })
			return err
		}},
		{"Swap", func(ctx context.Context, d *taskfile.Dir) error {
			return d.Swap(ctx, "1", []byte(task), []byte(`{"id":"1","subject":"b"}`))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := mustOpen(t)
			d.RememberWrites()
			path := writeRaw(t, d, "1.json", task)
			removed := 0
			defer taskfile.BeforeReplace(d.Path(), func(id string) {
				if err := os.Remove(path); err != nil {
					t.Errorf("rm %s: %v", path, err)
				}
				removed++
			})()
			err := tt.write(t.Context(), d)
			if removed != 1 {
				t.Fatalf("the file was removed %d times, want once: the write never got to replace it", removed)
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s of a file removed meanwhile = %v, want fs.ErrNotExist", tt.name, err)
			}
			if data, err := os.ReadFile(path); err == nil {
				t.Errorf("the removed file is back, holding %s", data)
			}
			if _, ok := d.Own("1", false); ok {
				t.Error("the write that did not happen is remembered as the file's contents")
			}
			if entries, _ := os.ReadDir(d.Path()); len(entries) > 1 || len(entries) == 1 && entries[0].Name() != ".lock" {
				t.Errorf("left in the list directory: %v", entries)
			}
		})
	}
}

// TestDir_WriteKeepsAReplacementMadeWithoutLocks: a task file replaced by
// a writer that takes no lock (a person's mv of an edited copy) in the
// same moment is not lost: an update starts over from it, keeping the
// edit, and a swap, whose old bytes it no longer holds, is refused.
func TestDir_WriteKeepsAReplacementMadeWithoutLocks(t *testing.T) {
	t.Parallel()
	const task = `{"id":"1","subject":"a","status":"pending"}`
	const edited = `{"id":"1","subject":"a","status":"pending","owner":"edited"}`
	for _, tt := range []struct {
		name  string
		write func(ctx context.Context, d *taskfile.Dir) error
		check func(t *testing.T, got *taskfile.Task, err error)
	}{
		{"Update", func(ctx context.Context, d *taskfile.Dir) error {
			_, err := d.Update(ctx, "1", func(t *taskfile.Task) error { t.Subject = "b"; return nil })
			return err
		}, func(t *testing.T, got *taskfile.Task, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if got.Subject != "b" || got.Owner != "edited" {
				t.Errorf("after the update the file holds %s, want the edit (owner edited) and the update (subject b)", got.Raw())
			}
		}},
		{"Swap", func(ctx context.Context, d *taskfile.Dir) error {
			err := d.Swap(ctx, "1", []byte(task), []byte(`{"id":"1","subject":"b"}`))
			if !errors.Is(err, taskfile.ErrChanged) {
				t.Errorf("Swap of a file replaced meanwhile = %v, want ErrChanged", err)
			}
			return nil
		}, func(t *testing.T, got *taskfile.Task, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Raw()) != edited {
				t.Errorf("after the refused swap the file holds %s, want the edit %s", got.Raw(), edited)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := mustOpen(t)
			d.RememberWrites()
			path := writeRaw(t, d, "1.json", task)
			copyPath := filepath.Join(t.TempDir(), "1.json")
			if err := os.WriteFile(copyPath, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			defer taskfile.BeforeReplace(d.Path(), func(id string) {
				once.Do(func() {
					if err := os.Rename(copyPath, path); err != nil {
						t.Errorf("mv: %v", err)
					}
				})
			})()
			if err := tt.write(t.Context(), d); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			got, err := d.Read("1")
			tt.check(t, got, err)
			if entries, _ := os.ReadDir(d.Path()); len(entries) != 2 {
				t.Errorf("the list directory holds %v, want .lock and 1.json", entries)
			}
		})
	}
}

// TestDir_TornReadWriteKeepsAReplacementMadeWithoutLocks: an update whose
// read without locks caught the file half written in place (as Claude
// Code writes it, under its lock: here the real proper-lockfile holds it)
// reads it again under the lock, and a file a writer that takes no lock
// renames into place in the moment of that write (a person's mv of an
// edited copy) is not lost: the update starts over from it, keeping the
// edit. (The write that read under the lock took the renamed file out
// and removed it.)
func TestDir_TornReadWriteKeepsAReplacementMadeWithoutLocks(t *testing.T) {
	t.Parallel()
	node := nodeTools(t)
	const whole = `{"id":"1","subject":"a","status":"pending"}`
	const edited = `{"id":"1","subject":"a","status":"pending","owner":"edited"}`
	d := mustOpen(t)
	d.RememberWrites()
	path := writeRaw(t, d, "1.json", whole)

	release := holdClaudeLock(t, node, path)
	// Half of a write in place, as a reader without the lock finds it.
	if err := os.WriteFile(path, []byte(whole[:len(whole)/2]), 0o644); err != nil {
		t.Fatal(err)
	}

	copyPath := filepath.Join(t.TempDir(), "1.json")
	if err := os.WriteFile(copyPath, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	moved := false
	defer taskfile.BeforeReplace(d.Path(), func(id string) {
		once.Do(func() {
			if err := os.Rename(copyPath, path); err != nil {
				t.Errorf("mv: %v", err)
			}
			moved = true
		})
	})()
	waiting := make(chan struct{}, 1)
	updated := make(chan error, 1)
	go func() {
		ctx := taskfile.WithLockWait(context.Background(), func(string) { waiting <- struct{}{} })
		_, err := d.Update(ctx, "1", func(t *taskfile.Task) error { t.Subject = "b"; return nil })
		updated <- err
	}()
	select {
	case <-waiting: // it read the torn file, and waits for the lock to read it whole
	case err := <-updated:
		t.Fatalf("the update did not wait for Claude Code's lock (err=%v)", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the update never waited for Claude Code's lock")
	}
	// The write in place ends, and the lock is released.
	if err := os.WriteFile(path, []byte(whole), 0o644); err != nil {
		t.Fatal(err)
	}
	release()
	select {
	case err := <-updated:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the update still waits 20s after the lock was released")
	}
	if !moved {
		t.Fatal("the update never got to replace the file")
	}
	got, err := d.Read("1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Subject != "b" || got.Owner != "edited" {
		t.Errorf("after the update the file holds %s, want the edit (owner edited) and the update (subject b)", got.Raw())
	}
	if entries, _ := os.ReadDir(d.Path()); len(entries) != 2 {
		t.Errorf("the list directory holds %v, want .lock and 1.json", entries)
	}
}

// TestDir_WriteAcrossAnEditorsSave: an editor's save that renames the
// task file away and writes it anew (vim's, by default) landing in the
// moment of a write — the file away as the write puts its contents in
// place, back a moment later — is not taken for a removal: the write
// starts over from the file the editor wrote, and both changes are in
// it.
func TestDir_WriteAcrossAnEditorsSave(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	path := writeRaw(t, d, "1.json", `{"id":"1","subject":"a","description":"","status":"pending"}`)
	saved := 0
	defer taskfile.BeforeReplace(d.Path(), func(string) {
		if saved == 0 {
			if err := os.Rename(path, path+"~"); err != nil { // the save's first step
				t.Errorf("rename away: %v", err)
			}
		}
	})()
	defer taskfile.WhenReplaceFindsNoFile(d.Path(), func(string) {
		saved++
		edited := `{"id":"1","subject":"a","description":"edited by a person","status":"pending"}`
		if err := os.WriteFile(path, []byte(edited), 0o644); err != nil { // and its second
			t.Errorf("write anew: %v", err)
		}
	})()
	got, err := d.Update(t.Context(), "1", func(t *taskfile.Task) error { t.Subject = "b"; return nil })
	if err != nil {
		t.Fatalf("update across an editor's save: %v", err)
	}
	if saved != 1 {
		t.Fatalf("the write found no file %d times, want once", saved)
	}
	if got.Subject != "b" || got.Description != "edited by a person" {
		t.Errorf("after the update: subject %q, description %q; want both changes", got.Subject, got.Description)
	}
	onDisk, err := d.Read("1")
	if err != nil {
		t.Fatal(err)
	}
	if onDisk.Subject != "b" || onDisk.Description != "edited by a person" {
		t.Errorf("on disk: subject %q, description %q; want both changes", onDisk.Subject, onDisk.Description)
	}
}

// TestDir_RemoveKeepsAReplacementMadeWithoutLocks: a file a writer that
// takes no lock renames into the task file's place (a person's mv of an
// edited copy) between Remove's check, under the locks, and the removal
// is not removed: Remove fails, saying so, and the person's file is
// there, whole; a Remove nobody disturbs removes the file and leaves
// nothing behind.
func TestDir_RemoveKeepsAReplacementMadeWithoutLocks(t *testing.T) {
	t.Parallel()
	for _, disturbed := range []bool{false, true} {
		d := mustOpen(t)
		path := writeRaw(t, d, "1.json", `{"id":"1","subject":"old","status":"completed"}`)
		edited := `{"id":"1","subject":"edited by a person","status":"pending"}`
		if disturbed {
			defer taskfile.BeforeReplace(d.Path(), func(string) {
				copyPath := filepath.Join(d.Path(), "1.json.edited")
				if err := os.WriteFile(copyPath, []byte(edited), 0o644); err != nil {
					t.Error(err)
				}
				if err := os.Rename(copyPath, path); err != nil {
					t.Errorf("mv: %v", err)
				}
			})()
		}
		err := d.Remove(t.Context(), "1", func(*taskfile.Task, error) error { return nil })
		data, rerr := os.ReadFile(path)
		switch {
		case !disturbed && (err != nil || !errors.Is(rerr, fs.ErrNotExist)):
			t.Errorf("remove: err %v, the file afterwards: %v; want it removed", err, rerr)
		case disturbed && (err == nil || string(data) != edited):
			t.Errorf("remove while a person's mv put an edited copy in place: err %v, file %q (%v); want an error and the person's file", err, data, rerr)
		}
		entries, _ := os.ReadDir(d.Path())
		for _, e := range entries {
			if e.Name() != "1.json" && e.Name() != ".lock" {
				t.Errorf("disturbed %v: %s left in the list directory", disturbed, e.Name())
			}
		}
	}
}

// holdClaudeLock takes Claude Code's lock on the task file at path with
// the real proper-lockfile (lock-hold.js in node, the test Node tools'
// directory), as Claude Code does, and returns once it is held; release
// releases it (the holder ends with the test).
func holdClaudeLock(t *testing.T, node, path string) (release func()) {
	t.Helper()
	holder := exec.Command("node", filepath.Join(node, "lock-hold.js"), path)
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "locked" {
		t.Fatalf("lock-hold.js did not take the lock: %q", lines.Text())
	}
	return func() {
		t.Helper()
		io.WriteString(stdin, "release\n")
		if !lines.Scan() || lines.Text() != "released" {
			t.Fatalf("lock-hold.js did not release: %q", lines.Text())
		}
	}
}
