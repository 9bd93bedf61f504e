package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/taskd/taskd/internal/proc"
)

// watchGate is a Gate that, when the attempt enters it, notes whether
// cmd.json is in its run folder and starts counting, with inotify, the
// files put in place under its name from then on.
type watchGate struct {
	t       *testing.T
	dir     string
	before  error // cmd.json's stat when the gate was entered
	created atomic.Int64
	w       *fsnotify.Watcher
	fenced  chan struct{} // closed when the fence file is seen
}

// fence is the file whose creation, after the run, ends the count.
const fence = "fence"

func (g *watchGate) Enter(context.Context) error {
	_, g.before = os.Stat(filepath.Join(g.dir, "cmd.json"))
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := w.Add(g.dir); err != nil {
		w.Close()
		return err
	}
	g.w, g.fenced = w, make(chan struct{})
	go func() {
		for ev := range w.Events {
			// A replacement is a rename onto the name (IN_MOVED_TO), a
			// new file a create: fsnotify reports both as Create.
			switch name := filepath.Base(ev.Name); {
			case name == "cmd.json" && ev.Has(fsnotify.Create):
				g.created.Add(1)
			case name == fence && ev.Has(fsnotify.Create):
				close(g.fenced)
				return
			}
		}
	}()
	return nil
}

func (g *watchGate) Started(time.Time) {}
func (g *watchGate) Exited()           {}

// count returns how many times cmd.json was put in place since the gate
// was entered, once the run is over: inotify delivers a directory's
// events in order, so those of the run come before that of a file made
// after it.
func (g *watchGate) count() int64 {
	g.t.Helper()
	defer g.w.Close()
	if err := os.WriteFile(filepath.Join(g.dir, fence), nil, 0o600); err != nil {
		g.t.Fatal(err)
	}
	select {
	case <-g.fenced:
	case <-time.After(10 * time.Second):
		g.t.Fatal("inotify never reported the fence file")
	}
	return g.created.Load()
}

// TestRun_CmdJSONOnceWithCgroup: an attempt that gets a cgroup of its own
// writes cmd.json once, when its agent has started, with its process
// group and cgroup: nothing before it has its slot (a restart learns
// whether it went on to start its agent from its cgroup), and nothing
// after.
func TestRun_CmdJSONOnceWithCgroup(t *testing.T) {
	if proc.Supervise().Mode() != proc.ByCgroup {
		t.Skip("attempts get no cgroups here: ", proc.Supervise())
	}
	base := t.TempDir()
	cfg, prof := execProfile(t, base)
	a := &Attempt{ListDir: base, ListID: "l", TaskID: "1", N: 1, Profile: prof, Cwd: t.TempDir(), Timeout: time.Minute, Prompt: "true"}
	a.Script = a.Prompt
	g := &watchGate{t: t, dir: a.Dir()}
	a.Gate = g
	res, out := NewLocal(cfg, slog.New(slog.DiscardHandler)).Run(t.Context(), a)
	if out != Finished || !res.Success {
		t.Fatalf("Run = %+v, %v", res, out)
	}
	if !errors.Is(g.before, fs.ErrNotExist) {
		t.Errorf("cmd.json was there before the attempt had its slot (%v): it is written before the start where a restart needs it only", g.before)
	}
	if got, want := g.count(), int64(1); got != want {
		t.Errorf("cmd.json put in place %d times from the slot on, want %d", got, want)
	}
	var cmd struct {
		PID    int    `json:"pid"`
		Cgroup string `json:"cgroup"`
		Argv   []string
	}
	data, err := os.ReadFile(filepath.Join(a.Dir(), "cmd.json"))
	if err != nil || json.Unmarshal(data, &cmd) != nil {
		t.Fatalf("cmd.json: %v\n%s", err, data)
	}
	if cmd.PID <= 0 || cmd.Cgroup == "" || len(cmd.Argv) == 0 {
		t.Errorf("cmd.json does not record how the agent was started, its process group and cgroup:\n%s", data)
	}
}

// TestRun_CmdJSONEarlyWhereARestartReadsIt: cmd.json is still written
// before the slot comes where a restart would read it: when it names a
// session (a new one given to the agent, or one it resumes), and in a run
// folder an earlier run of the same attempt number left (whose cmd.json
// names that run's process).
func TestRun_CmdJSONEarlyWhereARestartReadsIt(t *testing.T) {
	base := t.TempDir()
	cfg, prof := execProfile(t, base)
	for _, tc := range []struct {
		name    string
		session string
		earlier bool // the run folder is there, with the cmd.json of a run
	}{
		{"session", "5b2c4f8e-0d7a-4c55-9e1b-2f3a4b5c6d7e", false},
		{"earlier run's folder", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Attempt{ListDir: base, ListID: "l", TaskID: tc.name[:1], N: 1, Profile: prof, Cwd: t.TempDir(), Timeout: time.Minute, Prompt: "true", Resume: tc.session}
			a.Script = a.Prompt
			if tc.earlier {
				if err := os.MkdirAll(a.Dir(), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(a.Dir(), "cmd.json"), []byte(`{"pid": 12345, "startTime": 1}`), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var seen map[string]any
			a.Gate = gateFunc(func() error {
				data, err := os.ReadFile(filepath.Join(a.Dir(), "cmd.json"))
				if err == nil {
					err = json.Unmarshal(data, &seen)
				}
				return err
			})
			res, out := NewLocal(cfg, slog.New(slog.DiscardHandler)).Run(t.Context(), a)
			if out != Finished || !res.Success {
				t.Fatalf("Run = %+v, %v", res, out)
			}
			if seen == nil {
				t.Fatal("no cmd.json when the attempt had its slot")
			}
			if _, ok := seen["pid"]; ok {
				t.Errorf("cmd.json when the attempt had its slot names a process: %v", seen)
			}
			if got := seen["sessionId"]; tc.session != "" && got != tc.session {
				t.Errorf("cmd.json when the attempt had its slot names session %v, want %s", got, tc.session)
			}
		})
	}
}

// gateFunc is a Gate whose Enter is the function.
type gateFunc func() error

func (f gateFunc) Enter(context.Context) error { return f() }
func (gateFunc) Started(time.Time)             {}
func (gateFunc) Exited()                       {}
