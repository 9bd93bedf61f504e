package taskdrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDropAndSucceeded: a dropped file is in the list whole, under its
// id, with no dot-file left; the succeeded tasks are counted from the
// event log, other events not.
func TestDropAndSucceeded(t *testing.T) {
	list := t.TempDir()
	if got := Succeeded(list); got != 0 {
		t.Errorf("Succeeded of a list without an event log = %d, want 0", got)
	}
	if err := Drop(list, "7", []byte(`{"id": "7"}`)); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(list)
	if len(entries) != 1 || entries[0].Name() != "7.json" {
		t.Fatalf("the list holds %v, want only 7.json", entries)
	}
	if data, _ := os.ReadFile(filepath.Join(list, "7.json")); string(data) != `{"id": "7"}` {
		t.Errorf("7.json holds %q", data)
	}
	log := `{"type":"TaskStarted","task":"1"}` + "\n" + `{"type":"TaskSucceeded","task":"1"}` + "\n" + `{"type":"TaskFailed","task":"2"}` + "\n" + `{"type":"TaskSucceeded","task":"3"}` + "\n"
	os.MkdirAll(filepath.Join(list, ".taskd"), 0o700)
	if err := os.WriteFile(filepath.Join(list, ".taskd", "events.jsonl"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := Succeeded(list), 2; got != want {
		t.Errorf("Succeeded = %d, want %d", got, want)
	}
}

// TestWaitFor: a condition that comes to hold ends the wait; one that
// never does is an error after the timeout.
func TestWaitFor(t *testing.T) {
	n := 0
	if err := WaitFor(time.Minute, time.Millisecond, func() bool { n++; return n == 3 }); err != nil || n != 3 {
		t.Errorf("WaitFor = %v after %d looks, want nil after 3", err, n)
	}
	if err := WaitFor(10*time.Millisecond, time.Millisecond, func() bool { return false }); err == nil {
		t.Error("WaitFor of a condition that never holds returned nil")
	}
}

// TestStart_RuntimeDirOfItsOwn: the daemon a benchmark starts runs with a
// runtime directory of its own, not the user's, and Stop removes it.
func TestStart_RuntimeDirOfItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds taskd")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "taskd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/taskd")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build taskd: %v\n%s", err, out)
	}
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"concurrency": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Start(Options{Bin: bin, Root: root, Config: cfg, LogLevel: "info", Env: []string{"HOME=" + root}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(d.Pid()) + "/environ")
	if err != nil {
		d.Stop()
		t.Fatal(err)
	}
	var got []string
	for _, kv := range strings.Split(string(environ), "\x00") {
		if strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			got = append(got, kv)
		}
	}
	d.Stop()
	if want := "XDG_RUNTIME_DIR=" + d.Runtime; d.Runtime == "" || len(got) != 1 || got[0] != want {
		t.Errorf("the daemon's environment holds %q, want only %q", got, want)
	}
	if _, err := os.Lstat(d.Runtime); !os.IsNotExist(err) {
		t.Errorf("the daemon's runtime directory %s after Stop: %v, want it gone", d.Runtime, err)
	}
}
