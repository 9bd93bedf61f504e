package catalog_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/catalog"
	"github.com/taskd/taskd/internal/syncbuf"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/workflows"
)

// setup returns a configuration directory, a list directory and a catalog
// over them whose log is returned too.
func setup(t *testing.T) (configDir, listDir string, c *catalog.Catalog, log *syncbuf.Buffer) {
	t.Helper()
	configDir, listDir = t.TempDir(), filepath.Join(t.TempDir(), "L")
	if err := os.Mkdir(listDir, 0o700); err != nil {
		t.Fatal(err)
	}
	log = &syncbuf.Buffer{}
	return configDir, listDir, catalog.New(configDir, slog.New(slog.NewTextHandler(log, nil))), log
}

// quickTask returns the built-in quick-task workflow renamed.
func quickTask(t *testing.T, name string) []byte {
	t.Helper()
	for _, d := range workflows.Builtin() {
		if d.ID == "quick-task" {
			return bytes.Replace(d.Data, []byte(`"name": "Quick task"`), []byte(`"name": "`+name+`"`), 1)
		}
	}
	t.Fatal("no built-in quick-task")
	return nil
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// nameOf returns the name of workflow id as the list at listDir sees it.
func nameOf(c *catalog.Catalog, listDir, id string) string {
	wf, _, ok := c.Workflows(listDir).Lookup(id)
	if !ok {
		return ""
	}
	return wf.Name
}

// TestWorkflows: the built-ins, overridden by the configuration
// directory's, overridden by the list's own; a change is picked up.
func TestWorkflows(t *testing.T) {
	configDir, listDir, c, _ := setup(t)
	if got := nameOf(c, listDir, "quick-task"); got != "Quick task" {
		t.Fatalf("quick-task is %q, want the built-in", got)
	}
	write(t, filepath.Join(configDir, "workflows", "quick-task.json"), quickTask(t, "Configured"))
	waitfor.Cond(t, "the configuration's quick-task", 30*time.Second, func() bool { return nameOf(c, listDir, "quick-task") == "Configured" })
	write(t, filepath.Join(area.WorkflowsDir(listDir), "quick-task.json"), quickTask(t, "The list's"))
	waitfor.Cond(t, "the list's quick-task", 30*time.Second, func() bool { return nameOf(c, listDir, "quick-task") == "The list's" })
	if other := filepath.Join(t.TempDir(), "M"); nameOf(c, other, "quick-task") != "Configured" {
		t.Error("another list sees the first list's workflow")
	}
	if err := os.Remove(filepath.Join(area.WorkflowsDir(listDir), "quick-task.json")); err != nil {
		t.Fatal(err)
	}
	waitfor.Cond(t, "the list's quick-task to go", 30*time.Second, func() bool { return nameOf(c, listDir, "quick-task") == "Configured" })
}

// TestCheckWorkflow: a known, valid workflow passes; an unknown one, a
// broken one and one whose file cannot be read (a FIFO) are refused with
// the reason, and the broken file is logged.
func TestCheckWorkflow(t *testing.T) {
	configDir, listDir, c, log := setup(t)
	if err := os.Mkdir(filepath.Join(configDir, "workflows"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(area.WorkflowsDir(listDir), "broken.json"), []byte(`{"id":"broken","nodes":{"start":{"type":"start"}},"edges":[]}`))
	write(t, filepath.Join(area.WorkflowsDir(listDir), "garbage.json"), []byte(`{not json`))
	if err := syscall.Mkfifo(filepath.Join(configDir, "workflows", "piped.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id   string
		want error
		text string
	}{
		{"quick-task", nil, ""},
		{"nope", catalog.ErrUnknownWorkflow, "known: "},
		{"broken", catalog.ErrInvalidWorkflow, "its definition has errors"},
		{"piped", catalog.ErrInvalidWorkflow, "its file cannot be read: " + filepath.Join(configDir, "workflows", "piped.json") + ": read workflow: "},
	} {
		err := c.CheckWorkflow(listDir, tt.id)
		if tt.want == nil && err != nil || tt.want != nil && (!errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text)) {
			t.Errorf("CheckWorkflow(%s) = %v, want %v", tt.id, err, tt.want)
		}
	}
	if l := log.String(); !strings.Contains(l, "workflow problem") || !strings.Contains(l, "garbage.json") {
		t.Errorf("the broken files were not logged:\n%s", l)
	}
}

// TestWorkflows_LinkNotFollowed: a link in the list's workflow directory
// loads nothing, and is logged.
func TestWorkflows_LinkNotFollowed(t *testing.T) {
	_, listDir, c, log := setup(t)
	outside := filepath.Join(t.TempDir(), "evil.json")
	write(t, outside, quickTask(t, "Outside"))
	if err := os.MkdirAll(area.WorkflowsDir(listDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(area.WorkflowsDir(listDir), "evil.json")); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckWorkflow(listDir, "evil"); !errors.Is(err, catalog.ErrInvalidWorkflow) || !strings.Contains(err.Error(), "its file cannot be read") || !strings.Contains(err.Error(), "evil.json") {
		t.Errorf("a linked workflow: CheckWorkflow = %v, want it unreadable, naming its file", err)
	}
	if !strings.Contains(log.String(), "evil.json") {
		t.Errorf("the link was not logged:\n%s", log)
	}
}

// TestCommands: command files of the configuration directory, overridden
// by the list's; an invalid one is known, with its reason; a link in the
// list's directory is refused; a change is picked up.
func TestCommands(t *testing.T) {
	configDir, listDir, c, _ := setup(t)
	write(t, filepath.Join(configDir, "commands", "review.md"), []byte("Review the change.\n"))
	write(t, filepath.Join(configDir, "commands", "test.md"), []byte("Run the tests.\n"))
	write(t, filepath.Join(area.CommandsDir(listDir), "test.md"), []byte("---\ndescription: the list's\n---\nRun the list's tests.\n"))
	write(t, filepath.Join(area.CommandsDir(listDir), "bad.md"), []byte("---\nnope: 1\n---\nx\n"))
	write(t, filepath.Join(area.CommandsDir(listDir), "notes.txt"), []byte("not a command"))
	if err := os.Mkdir(filepath.Join(area.CommandsDir(listDir), "dir.md"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "evil.md")
	write(t, outside, []byte("Do evil.\n"))
	if err := os.Symlink(outside, filepath.Join(area.CommandsDir(listDir), "evil.md")); err != nil {
		t.Fatal(err)
	}

	for name, cs := range map[string]*catalog.Commands{"cached": c.Commands(listDir), "uncached": catalog.LoadCommands(configDir, listDir)} {
		for _, tt := range []struct {
			name, body, err string
			has             bool
		}{
			{name: "review", body: "Review the change.", has: true},
			{name: "test", body: "Run the list's tests.", has: true},
			{name: "bad", err: "nope", has: true},
			{name: "evil", err: "link", has: true},
			{name: "notes", has: false},
			{name: "dir", has: false},
			{name: "missing", has: false},
		} {
			if got := cs.Has(tt.name); got != tt.has {
				t.Errorf("%s: Has(%s) = %v, want %v", name, tt.name, got, tt.has)
			}
			cf, err := cs.Get(tt.name)
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("%s: Get(%s) = %v, want an error about %q", name, tt.name, err, tt.err)
				}
			case tt.body != "":
				if err != nil || cf == nil || cf.Body != tt.body {
					t.Errorf("%s: Get(%s) = %+v, %v; want the body %q", name, tt.name, cf, err, tt.body)
				}
			default:
				if cf != nil || err != nil {
					t.Errorf("%s: Get(%s) = %+v, %v; want nothing", name, tt.name, cf, err)
				}
			}
		}
	}

	write(t, filepath.Join(area.CommandsDir(listDir), "ship.md"), []byte("Ship it.\n"))
	waitfor.Cond(t, "the new command file", 30*time.Second, func() bool { return c.Commands(listDir).Has("ship") })
}

// TestCatalog_Concurrent: lists looked up from many goroutines (run with
// -race).
func TestCatalog_Concurrent(t *testing.T) {
	configDir, _, c, _ := setup(t)
	write(t, filepath.Join(configDir, "commands", "review.md"), []byte("Review.\n"))
	var wg sync.WaitGroup
	for i := range 8 {
		list := filepath.Join(t.TempDir(), "L")
		wg.Go(func() {
			for range 20 {
				if !c.Commands(list).Has("review") {
					t.Errorf("goroutine %d: no review command", i)
					return
				}
				if err := c.CheckWorkflow(list, "quick-task"); err != nil {
					t.Errorf("goroutine %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
