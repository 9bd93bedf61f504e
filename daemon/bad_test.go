package daemon_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// badCases are task files the daemon must refuse (DESIGN §3.3), with a
// phrase the rejection must contain.
var badCases = []struct {
	name string // file name
	make func(path string) error
	want string
}{
	{"10.json", writeString(`{"subject": "x", "owner": "taskd",`), "invalid JSON: line 1"},
	{"11.json", writeString(`["not", "an", "object"]`), "the file holds an array, not a JSON object"},
	{"12.json", func(p string) error {
		return os.WriteFile(p, []byte(`{"owner": "taskd", "pad": "`+strings.Repeat("x", 1<<20)+`"}`), 0o644)
	}, "larger than the 1 MiB limit"},
	{"13.json", func(p string) error {
		target := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(p))), "outside.json")
		os.WriteFile(target, []byte(`{"owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "touch /tmp/never"}}}`), 0o644)
		return os.Symlink(target, p)
	}, "the file is a symbolic link"},
	{"14.json", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "not a regular file"},
	{"15.json", func(p string) error { return os.Mkdir(p, 0o755) }, "not a regular file"},
	{"16.json", writeString(`{"id": "61", "owner": "taskd"}`), `the id "61" does not match the file name 16.json`},
	{"17.json", writeString(`{"owner": "taskd", "status": "done"}`), `field "status" is "done"`},
	{"18.json", writeString(`{"owner": "taskd", "blockedBy": 3}`), `field "blockedBy" is a number, want an array of strings`},
	{"19.json", writeString(`{"owner": "taskd", "metadata": {"taskd": {"timeout": true}}}`), `metadata.taskd.timeout`},
	{"20.json", writeString(`{"owner": "taskd", "metadata": {"taskd": {"agent": "nobody"}}}`), `unknown agent "nobody"`},
	{"21.json", writeString(`{"owner": "taskd:nobody"}`), `unknown agent "nobody"`},
	{"22.json", writeString(`{"owner": "taskd", "metadata": {"taskd": "echo hi"}}`), `metadata.taskd is a string`},
	{"23.json", writeString(`{"owner": "taskd", "metadata": {"taskd": {"parent": "23"}}}`), `cannot be its own parent`},
	{"24.json", writeString(`{"owner": "taskd", "blockedBy": ["25"], "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`), `blockedBy forms a cycle: 24 → 25 → 24`},
	{"25.json", writeString(`{"owner": "taskd", "blockedBy": ["24"], "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`), `blockedBy forms a cycle: 25 → 24 → 25`},
	{"26.json", writeBytes([]byte{'{', '"', 's', 'u', 'b', 0xff, '"', ':', '1', '}'}), "invalid UTF-8"},
	{"27.json", writeString(`{"owner": "taskd", "metadata": {"workflowType": 7}}`), "metadata.workflowType is a number"},
}

func writeString(s string) func(string) error { return writeBytes([]byte(s)) }

func writeBytes(b []byte) func(string) error {
	return func(p string) error { return os.WriteFile(p, b, 0o644) }
}

func TestDaemon_RejectsBadFilesAndLeavesThemAlone(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	dir := h.listDir("l")
	before := map[string]string{}
	for _, c := range badCases {
		p := filepath.Join(dir, c.name)
		if err := c.make(p); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		before[c.name] = snapshot(t, p)
	}
	h.drop("l", "1", execTask("good neighbour", "true"))
	h.waitState("l", "1", task.Succeeded, 10*time.Second)

	for _, c := range badCases {
		path := filepath.Join(dir, ".taskd", "rejected", c.name+".txt")
		h.waitFor("rejection of "+c.name, 10*time.Second, func() bool {
			_, err := os.Stat(path)
			return err == nil
		})
		text, _ := os.ReadFile(path)
		if !strings.Contains(string(text), c.want) || !strings.Contains(string(text), "How to fix it: ") {
			t.Errorf("%s: rejection says\n%s\nwant it to contain %q and a fix", c.name, text, c.want)
		}
	}
	var evs []eventlog.Event
	for _, c := range badCases {
		// The event follows the rejection's text.
		evs = h.waitEvents("l", eventlog.TaskRejected, strings.TrimSuffix(c.name, ".json"), 1)
	}
	for _, c := range badCases {
		if got := countEvents(evs, eventlog.TaskRejected, strings.TrimSuffix(c.name, ".json")); got != 1 {
			t.Errorf("%s: %d TaskRejected events, want 1", c.name, got)
		}
		if after := snapshot(t, filepath.Join(dir, c.name)); after != before[c.name] {
			t.Errorf("%s was modified:\nbefore %s\nafter  %s", c.name, before[c.name], after)
		}
	}
	if _, err := os.Stat("/tmp/never"); err == nil {
		t.Errorf("the symlinked task ran")
	}

	// Fixing a file makes it eligible; its rejection goes away.
	h.drop("l", "10", execTask("fixed", "true"))
	h.waitState("l", "10", task.Succeeded, 10*time.Second)
	h.waitFor("rejection of 10.json to be removed", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, ".taskd", "rejected", "10.json.txt"))
		return errors.Is(err, os.ErrNotExist)
	})
}

// A file caught half-written by an in-place writer is not rejected when
// the writer finishes within the grace period.
func TestDaemon_TornWriteIsNotRejected(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	p := filepath.Join(h.listDir("l"), "5.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	content := execTask("written slowly", "true")
	f.WriteString(content[:10]) // the daemon sees this half
	f.Sync()
	// Wait until the daemon has read the half file (its event was handled),
	// using the acceptance of a probe task dropped afterwards as the
	// marker: the rest of the file must follow within the grace period.
	h.drop("l", "6", execTask("probe", "true"))
	h.waitEvents("l", eventlog.TaskAccepted, "6", 1)
	f.WriteString(content[10:])
	f.Close()
	h.waitState("l", "5", task.Succeeded, 10*time.Second)
	if countEvents(h.waitEvents("l", eventlog.TaskSucceeded, "5", 1), eventlog.TaskRejected, "5") != 0 {
		t.Errorf("a torn read caused a rejection")
	}
}

// snapshot describes a path without following links.
func snapshot(t *testing.T, p string) string {
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
