package held_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/held"
)

// runtimeDir points the runtime directory at a fresh directory and
// returns it.
func runtimeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", dir)
	t.Setenv("TMPDIR", t.TempDir())
	return dir
}

// TestRegistry: holding and releasing tasks, as the registry reports them
// and as its status file says (what taskd status reads, with Read).
func TestRegistry(t *testing.T) {
	runtimeDir(t)
	root := "/tasks/root"
	r := held.New(root, func(err error) { t.Errorf("onError: %v", err) })
	defer r.Close()
	retry := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

	if !r.Hold("L", "2", "disk full", retry) {
		t.Error("the first Hold of a task is not first")
	}
	first, _ := r.Get("L", "2")
	if r.Hold("L", "2", "read-only", retry.Add(time.Minute)) {
		t.Error("a second Hold of a task is first")
	}
	r.Hold("A", "9", "lock", retry)
	r.Hold("L", "10", "disk full", retry)

	got, ok := r.Get("L", "2")
	if !ok || got.Reason != "read-only" || got.Tries != 2 || !got.Retry.Equal(retry.Add(time.Minute)) || !got.Since.Equal(first.Since) {
		t.Errorf("Get = %+v, %v; want the last reason and retry, 2 tries, the first since", got, ok)
	}
	order := func(ts []held.Task) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.List+"/"+t.ID)
		}
		return strings.Join(s, " ")
	}
	if got, want := order(r.Tasks()), "A/9 L/10 L/2"; got != want {
		t.Errorf("Tasks = %s, want %s (by list, then id)", got, want)
	}
	pid, tasks, err := held.Read(root)
	if err != nil || pid != os.Getpid() || order(tasks) != "A/9 L/10 L/2" || tasks[2].Reason != "read-only" {
		t.Errorf("Read = %d, %+v, %v; want this process and the three tasks", pid, tasks, err)
	}
	if pid, tasks, err := held.Read("/another/root"); pid != 0 || tasks != nil || err != nil {
		t.Errorf("Read of another root = %d, %v, %v; want nothing", pid, tasks, err)
	}

	if !r.Release("L", "2") || r.Release("L", "2") || r.Release("L", "nope") {
		t.Error("Release reports a task held exactly once")
	}
	if _, ok := r.Get("L", "2"); ok {
		t.Error("a released task is still held")
	}
	r.Release("A", "9")
	r.Release("L", "10")
	path, _ := held.StatusPath(root)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the status file is still there with nothing held: %v", err)
	}
	if pid, tasks, err := held.Read(root); pid != 0 || tasks != nil || err != nil {
		t.Errorf("Read with nothing held = %d, %v, %v", pid, tasks, err)
	}
}

// TestRegistry_Close: a stopped daemon leaves no status file.
func TestRegistry_Close(t *testing.T) {
	runtimeDir(t)
	r := held.New("/r", nil)
	r.Hold("L", "1", "disk full", time.Time{})
	path, _ := held.StatusPath("/r")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no status file while a task is held: %v", err)
	}
	r.Close()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the status file: %v", err)
	}
}

// TestRegistry_RemoveLeft: the status file a killed daemon left for the
// root (and the temporary file of a write the kill tore) goes when the
// next daemon serves the root; a file of another root under the same name
// stays, and so does the file of the registry's own daemon.
func TestRegistry_RemoveLeft(t *testing.T) {
	runtimeDir(t)
	for _, tt := range []struct {
		name, root string // the root the file left names
		want       bool   // whether it stays
	}{
		{"the root's", "/r", false},
		{"another root's", "/other", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path, _ := held.StatusPath("/r")
			data, _ := json.Marshal(map[string]any{"pid": 1, "root": tt.root, "tasks": []held.Task{{List: "L", ID: "1"}}})
			if err := held.WriteFile(path, data); err != nil {
				t.Fatal(err)
			}
			torn := path + ".tmp123"
			if err := os.WriteFile(torn, data[:5], 0o600); err != nil {
				t.Fatal(err)
			}
			held.New("/r", func(err error) { t.Errorf("onError: %v", err) }).RemoveLeft()
			if _, err := os.Stat(path); (err == nil) != tt.want {
				t.Errorf("the file left: %v; want it kept %v", err, tt.want)
			}
			if _, err := os.Stat(torn); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the torn write: %v; want it removed", err)
			}
			os.Remove(path)
		})
	}
	r := held.New("/r", nil)
	defer r.Close()
	r.Hold("L", "1", "disk full", time.Time{})
	r.RemoveLeft()
	if pid, tasks, _ := held.Read("/r"); pid != os.Getpid() || len(tasks) != 1 {
		t.Errorf("RemoveLeft after the registry wrote its file: Read = %d, %v; want this process's file", pid, tasks)
	}
}

// TestRegistry_WriteFails: a status file that cannot be written is
// reported once per kind of failure, and the registry goes on in memory.
func TestRegistry_WriteFails(t *testing.T) {
	runtimeDir(t)
	path, err := held.StatusPath("/r")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o700); err != nil { // a directory in its place
		t.Fatal(err)
	}
	var errs []error
	r := held.New("/r", func(err error) { errs = append(errs, err) })
	r.Hold("L", "1", "disk full", time.Time{})
	r.Hold("L", "2", "disk full", time.Time{})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "write the held tasks' status file") {
		t.Errorf("errors reported: %v; want one", errs)
	}
	if got := len(r.Tasks()); got != 2 {
		t.Errorf("%d tasks held, want 2", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("a temporary file was left: %s", e.Name())
		}
	}
}

// TestRead_Corrupt: a status file that is not JSON is an error that names
// it.
func TestRead_Corrupt(t *testing.T) {
	runtimeDir(t)
	path, _ := held.StatusPath("/r")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := held.Read("/r"); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Read = %v, want an error naming %s", err, path)
	}
}

// TestRegistry_Concurrent: holds and releases from many goroutines leave
// the registry and its file consistent (run with -race).
func TestRegistry_Concurrent(t *testing.T) {
	runtimeDir(t)
	r := held.New("/r", func(err error) { t.Errorf("onError: %v", err) })
	defer r.Close()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			id := strconv.Itoa(i)
			for range 20 {
				r.Hold("L", id, "disk full", time.Time{})
				r.Tasks()
				r.Release("L", id)
			}
			if i%2 == 0 {
				r.Hold("L", id, "kept", time.Time{})
			}
		})
	}
	wg.Wait()
	_, tasks, err := held.Read("/r")
	if err != nil || len(tasks) != 4 || len(r.Tasks()) != 4 {
		t.Errorf("after the goroutines: file %v (%v), registry %v; want the 4 kept", tasks, err, r.Tasks())
	}
}

// TestWriteFile: the file is replaced whole, private, and a link in its
// place is replaced, not followed.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "held.json")
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	if err := held.WriteFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(outside); string(data) != "keep" {
		t.Errorf("the link's target was written: %q", data)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file is %v (%v), want a regular file of mode 0600", fi.Mode(), err)
	}
	if data, _ := os.ReadFile(path); string(data) != "new" {
		t.Errorf("the file holds %q", data)
	}
	// A link where the temporary file goes is not followed either.
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.Symlink(outside, tmp); err != nil {
		t.Fatal(err)
	}
	if err := held.WriteFile(path, []byte("newer")); err == nil {
		t.Error("WriteFile through a link at its temporary name succeeded")
	}
	if data, _ := os.ReadFile(outside); string(data) != "keep" {
		t.Errorf("the link's target was written: %q", data)
	}
}

// TestRuntimeDir: $XDG_RUNTIME_DIR/taskd, made private; one that is a
// link, or open to others, is refused for the next candidate.
func TestRuntimeDir(t *testing.T) {
	xdg := runtimeDir(t)
	dir, err := held.RuntimeDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(xdg, "taskd"); dir != want {
		t.Fatalf("RuntimeDir = %s, want %s", dir, want)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the runtime directory is %v (%v), want a private directory", fi.Mode(), err)
	}

	uid := strconv.Itoa(os.Geteuid())
	for _, tt := range []struct {
		name string
		make func(t *testing.T, p string)
	}{
		{"a link", func(t *testing.T, p string) {
			if err := os.Symlink(t.TempDir(), p); err != nil {
				t.Fatal(err)
			}
		}},
		{"open to others", func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file", func(t *testing.T, p string) {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			xdg := runtimeDir(t)
			tt.make(t, filepath.Join(xdg, "taskd"))
			next := filepath.Join(os.TempDir(), "taskd-"+uid) // TMPDIR, set by runtimeDir
			if fi, err := os.Stat(filepath.Join("/run/user", uid)); err == nil && fi.IsDir() {
				next = filepath.Join("/run/user", uid, "taskd")
			}
			if got, err := held.RuntimeDir(); err != nil || got != next {
				t.Errorf("RuntimeDir = %s, %v; want %s", got, err, next)
			}
		})
	}
}

// TestStatusPath: one file per root, in the runtime directory.
func TestStatusPath(t *testing.T) {
	xdg := runtimeDir(t)
	a, _ := held.StatusPath("/a")
	b, _ := held.StatusPath("/b")
	if a == b || filepath.Dir(a) != filepath.Join(xdg, "taskd") || !strings.HasSuffix(a, ".json") {
		t.Errorf("StatusPath = %s and %s; want two files of %s/taskd", a, b, xdg)
	}
	var sf map[string]any
	r := held.New("/a", nil)
	defer r.Close()
	r.Hold("L", "1", "x", time.Time{})
	data, _ := os.ReadFile(a)
	if err := json.Unmarshal(data, &sf); err != nil || sf["root"] != "/a" {
		t.Errorf("the status file of /a holds %s (%v)", data, err)
	}
}
