package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/clock"
	"github.com/taskd/taskd/internal/syncbuf"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/taskfile"
)

// harness runs a real daemon, in this process, on a temporary root. Tests
// act on it only through files, as users do.
type harness struct {
	t      testing.TB
	root   string
	cfg    *config.Config
	cancel context.CancelFunc
	done   chan error
	logs   *syncBuffer
	clock  clock.Clock // the daemon's, if not the real one
}

type harnessOption func(*config.FileConfig)

// startDaemon starts a daemon on a new root with the lists given, waits until
// it has scanned them, and stops it when the test ends.
func startDaemon(t *testing.T, lists []string, opts ...harnessOption) *harness {
	return startDaemonTB(t, lists, opts...)
}

// startDaemonB is startDaemon for benchmarks, with one list "bench".
func startDaemonB(b *testing.B, opts ...harnessOption) *harness {
	return startDaemonTB(b, []string{"bench"}, opts...)
}

// startDaemonWithCLI is startDaemon with a real taskd binary on the agents'
// PATH, for agents that run taskd's in-execution commands.
func startDaemonWithCLI(t *testing.T, lists []string, opts ...harnessOption) *harness {
	exe := taskdBinary(t)
	return startDaemonExe(t, lists, exe, opts...)
}

func startDaemonTB(t testing.TB, lists []string, opts ...harnessOption) *harness {
	return startDaemonExe(t, lists, "", opts...)
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// built is the path of the taskd binary once taskdBinary has built it:
// read by tests that run while another may be building it.
var built atomic.Value

// builtTaskd returns the taskd binary taskdBinary built, or "" if none
// is built (yet).
func builtTaskd() string {
	bin, _ := built.Load().(string)
	return bin
}

// taskdBinary builds cmd/taskd once per test run.
func taskdBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "taskd-test-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "taskd")
		out, err := exec.Command("go", "build", "-o", builtBin, "../cmd/taskd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built.Store(builtBin)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

func startDaemonExe(t testing.TB, lists []string, exe string, opts ...harnessOption) *harness {
	t.Helper()
	return startDaemonAt(t, filepath.Join(t.TempDir(), "tasks"), lists, exe, opts...)
}

// startDaemonAt is startDaemonExe on the root at root (made, with its
// lists), which may be anywhere (on a file system of the test's own).
func startDaemonAt(t testing.TB, root string, lists []string, exe string, opts ...harnessOption) *harness {
	t.Helper()
	h := newHarness(t, root, lists, exe, opts...)
	h.start()
	t.Cleanup(h.stop)
	return h
}

// startDaemonClock is startDaemon with a daemon that decides by clock c.
func startDaemonClock(t *testing.T, c clock.Clock, lists []string, opts ...harnessOption) *harness {
	t.Helper()
	h := newHarness(t, filepath.Join(t.TempDir(), "tasks"), lists, "", opts...)
	h.clock = c
	h.start()
	t.Cleanup(h.stop)
	return h
}

// newHarness makes the root at root, with its lists, and the daemon's
// configuration; it does not start the daemon.
func newHarness(t testing.TB, root string, lists []string, exe string, opts ...harnessOption) *harness {
	t.Helper()
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, l := range lists {
		if err := os.Mkdir(filepath.Join(root, l), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fc := &config.FileConfig{Grace: "2s"}
	for _, o := range opts {
		o(fc)
	}
	cfg, err := config.NewConfig(root, nil, fc)
	if err != nil {
		t.Fatal(err)
	}
	if exe != "" {
		cfg.Executable = exe
	}
	// A configuration directory of the test's own: no user's workflows or
	// command files, and the configuration the taskd commands that agents
	// run read ($TASKD_CONFIG).
	// A home of the test's own, where tasks without a cwd run: what /read
	// may load (whose rule counts the home's siblings as other users'
	// homes) is the same whatever $HOME the suite runs with — such as a
	// directory directly under /tmp, the parent of every test's temporary
	// directories.
	cfg.Home = filepath.Join(filepath.Dir(root), "home", "me")
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg.Dir = filepath.Join(filepath.Dir(root), "config", "taskd")
	cfg.StateDir = filepath.Join(filepath.Dir(root), "state", "taskd")
	cfg.ConfigPath = filepath.Join(cfg.Dir, "config.json")
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(fc)
	if err := os.WriteFile(cfg.ConfigPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, root: root, cfg: cfg, logs: &syncBuffer{}}
}

func (h *harness) start() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var opts []daemon.Option
	if h.clock != nil {
		opts = append(opts, daemon.WithClock(h.clock))
	}
	d := daemon.New(h.cfg, slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})), opts...)
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- d.Run(ctx) }()
	select {
	case <-d.Started():
	case err := <-h.done:
		h.t.Fatalf("daemon did not start: %v\n%s", err, h.logs)
	case <-time.After(10 * time.Second):
		h.t.Fatalf("daemon did not start within 10s\n%s", h.logs)
	}
}

// stop stops the daemon and waits for it (idempotent).
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("daemon: %v", err)
		}
	case <-time.After(30 * time.Second):
		h.t.Errorf("daemon did not stop within 30s")
	}
}

func (h *harness) listDir(list string) string { return filepath.Join(h.root, list) }

// drop writes a task file the way a careful user does: write elsewhere in
// the list, then rename into place.
func (h *harness) drop(list, id, content string) {
	h.t.Helper()
	dir := h.listDir(list)
	tmp := filepath.Join(dir, "."+id+".drop")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, id+".json")); err != nil {
		h.t.Fatal(err)
	}
}

// execTask returns a task file for the exec profile running script.
func execTask(subject, script string, extra ...string) string {
	td := map[string]any{"agent": "exec", "prompt": script}
	tf := map[string]any{"subject": subject, "owner": "taskd", "metadata": map[string]any{"taskd": td}}
	for i := 0; i+1 < len(extra); i += 2 {
		var v any
		if err := json.Unmarshal([]byte(extra[i+1]), &v); err != nil {
			panic(err)
		}
		if k, ok := strings.CutPrefix(extra[i], "taskd."); ok {
			td[k] = v
		} else {
			tf[extra[i]] = v
		}
	}
	b, _ := json.Marshal(tf)
	return string(b)
}

// read reads a task, failing the test on error.
func (h *harness) read(list, id string) *taskfile.Task {
	h.t.Helper()
	t, err := taskfile.ReadFile(filepath.Join(h.listDir(list), id+".json"))
	if err != nil {
		h.t.Fatal(err)
	}
	return t
}

// patience scales the deadline of every wait for the daemon: a deadline
// bounds how long a broken daemon may hang a test, never how fast a
// working one must be, and a loaded machine under the race detector is
// many times slower than a quiet one.
const patience = 3

// waitFor polls cond until it holds or the deadline (timeout, times
// patience) passes.
func (h *harness) waitFor(what string, timeout time.Duration, cond func() bool) {
	h.t.Helper()
	timeout *= patience
	if !waitfor.WithinEvery(timeout, 5*time.Millisecond, cond) {
		if dir := os.Getenv("TASKD_TEST_HANGDIR"); dir != "" {
			h.keepHang(dir, what)
		}
		h.t.Fatalf("timed out after %s waiting for %s\ndaemon log:\n%s", timeout, what, h.logs)
	}
}

// keepHang keeps what a timed-out wait leaves for a person to read, in dir
// (TASKD_TEST_HANGDIR): every goroutine's stack in hang-*.txt and, beside
// it in hang-*.root, a copy of the daemon's root — the task files, the event
// logs, the run folders — and its log, as they were when the wait gave up.
func (h *harness) keepHang(dir, what string) {
	f, err := os.CreateTemp(dir, "hang-*.txt")
	if err != nil {
		h.t.Logf("keep the hang: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s: %s\n", h.t.Name(), what)
	pprof.Lookup("goroutine").WriteTo(f, 2)
	kept := strings.TrimSuffix(f.Name(), ".txt") + ".root"
	copyRegular(kept, h.root)
	os.WriteFile(kept+".log", []byte(h.logs.String()), 0o644)
	h.t.Logf("kept the goroutines in %s and the root in %s", f.Name(), kept)
}

// copyRegular copies the directories and regular files under src to dst,
// skipping anything else (a lock's FIFO, a socket) and what vanishes while
// it walks.
func copyRegular(dst, src string) {
	filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			if data, err := os.ReadFile(path); err == nil {
				os.WriteFile(to, data, 0o644)
			}
		}
		return nil
	})
}

// waitState waits until task id of list has metadata.taskd.state == state.
func (h *harness) waitState(list, id string, state task.State, timeout time.Duration) *taskfile.Task {
	h.t.Helper()
	var last *taskfile.Task
	h.waitFor(fmt.Sprintf("task %s/%s to be %s", list, id, state), timeout, func() bool {
		t, err := taskfile.ReadFile(filepath.Join(h.listDir(list), id+".json"))
		if err != nil {
			return false
		}
		last = t
		s := task.Of(t)
		return s == state
	})
	return last
}

func stateOf(t *taskfile.Task) task.State { return task.Of(t) }

// events reads a list's event log.
func (h *harness) events(list string) []eventlog.Event {
	h.t.Helper()
	evs, err := eventlog.Read(h.listDir(list))
	if err != nil {
		h.t.Fatalf("events of %s: %v", list, err)
	}
	return evs
}

// waitEvents waits until list's log has at least n events of typ for task.
// (A task file shows a transition a moment before its event is logged.)
func (h *harness) waitEvents(list, typ, tf string, n int) []eventlog.Event {
	h.t.Helper()
	var evs []eventlog.Event
	h.waitFor(fmt.Sprintf("%d %s events for %s", n, typ, tf), 10*time.Second, func() bool {
		evs, _ = eventlog.Read(h.listDir(list))
		return countEvents(evs, typ, tf) >= n
	})
	return evs
}

func countEvents(evs []eventlog.Event, typ, tf string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ && (tf == "" || e.Task == tf) {
			n++
		}
	}
	return n
}

// syncBuffer is a log that a process or goroutine writes while the test
// reads it.
type syncBuffer = syncbuf.Buffer

var _ io.Writer = (*syncBuffer)(nil)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// mustOpen opens the list directory at path.
func mustOpen(t *testing.T, path string) *taskfile.Dir {
	t.Helper()
	d, err := taskfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
