// Package jobtest runs jobs inside a test, without a daemon: a root with
// one list on disk, the configuration, agents run as processes of this
// machine (agent.Local), the catalog and the pause file, as the daemon
// gives its jobs; tasks put as files, jobs made for them with a slot that
// is always free, and what the jobs wrote read back. The packages of the
// kinds of work (plain, flow, chain, subagent) test their handlers with
// it, record in and record out. Only tests import it.
package jobtest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/catalog"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/internal/jsonorder"
	"github.com/taskd/taskd/internal/syncbuf"
	"github.com/taskd/taskd/taskfile"
)

// ListID is the id of the harness's list.
const ListID = "l"

// Options change the harness.
type Options struct {
	// Config is the configuration file's content (nil: none).
	Config *config.FileConfig
	// Runner runs the agents (nil: agent.Local).
	Runner job.Runner
}

// A Harness is a root with one list, and the Env its jobs share.
type Harness struct {
	T    testing.TB
	Root string    // the task root
	Cwd  string    // a working directory for tasks, outside the root
	List *job.List // the list "l"
	Env  *job.Env
	Log  *syncbuf.Buffer // what the jobs logged
}

// New returns a harness for t.
func New(t testing.TB, o Options) *Harness {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "tasks")
	listDir := filepath.Join(root, ListID)
	cwd := filepath.Join(base, "work")
	for _, d := range []string{listDir, cwd} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.NewConfig(root, []string{ListID}, o.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir = filepath.Join(base, "config")
	cfg.Home = filepath.Join(base, "home")
	cfg.StateDir = filepath.Join(base, "state")
	cfg.OtherHomes = func(string) []string { return nil }
	dir, err := taskfile.Open(listDir)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	runner := o.Runner
	if runner == nil {
		runner = agent.NewLocal(cfg, log)
	}
	events := eventlog.New(listDir)
	t.Cleanup(func() { events.Close() })
	h := &Harness{T: t, Root: root, Cwd: cwd, Log: logs,
		List: &job.List{ID: ListID, Dir: dir, Events: events},
		Env: &job.Env{Config: cfg, Runner: runner, Catalog: catalog.New(cfg.Dir, log), Log: log,
			Pauses: job.NewPauses(root, func(string) ([]string, bool) { return nil, false }, func(err error) { t.Errorf("pause file: %v", err) })},
	}
	return h
}

// Put writes task id's file with data, as a person or Claude Code would.
func (h *Harness) Put(id, data string) {
	h.T.Helper()
	if err := os.WriteFile(h.List.Dir.File(id), []byte(data), 0o600); err != nil {
		h.T.Fatal(err)
	}
}

// Job returns a job of kind on task id, whose slot is always free.
func (h *Harness) Job(id string, kind job.Kind) *job.Job {
	return &job.Job{Scope: job.Scope{Env: h.Env, List: h.List, ID: id}, Kind: kind, Slot: FreeSlot{}}
}

// Do runs a job of kind on task id with handler, as the daemon's loop
// does: given the task file as it is when the job starts.
func (h *Harness) Do(handler job.Handler, id string, kind job.Kind) (*taskfile.Task, error) {
	h.T.Helper()
	t, err := h.List.Dir.Read(id)
	if err != nil {
		h.T.Fatal(err)
	}
	return handler.Do(context.Background(), h.Job(id, kind), t)
}

// Read returns task id as its file is now.
func (h *Harness) Read(id string) *taskfile.Task {
	h.T.Helper()
	t, err := h.List.Dir.Read(id)
	if err != nil {
		h.T.Fatal(err)
	}
	return t
}

// Taskd returns task id's metadata.taskd as compact JSON.
func (h *Harness) Taskd(id string) string {
	h.T.Helper()
	return string(jsonorder.AppendCompact(nil, h.Read(id).Metadata.Object("taskd")))
}

// Events returns the types of the list's events about task id, in order.
func (h *Harness) Events(id string) []string {
	h.T.Helper()
	evs, err := eventlog.Read(h.List.Path())
	if err != nil {
		h.T.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Task == id {
			out = append(out, ev.Type)
		}
	}
	return out
}

// RunFile returns the contents of a file of attempt n's run folder of task
// id ("" when it is missing).
func (h *Harness) RunFile(id string, n int, name string) string {
	data, _ := os.ReadFile(filepath.Join(h.List.RunDir(id, n), name))
	return string(data)
}

// FreeSlot is a concurrency slot that is always free.
type FreeSlot struct{}

func (FreeSlot) Acquire(context.Context) error { return nil }
func (FreeSlot) Release()                      {}
func (FreeSlot) Ready() bool                   { return true }
func (FreeSlot) StepAside()                    {}
