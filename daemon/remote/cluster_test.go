package remote_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/natstest"
	"github.com/taskd/taskd/taskfile"
)

// A cluster is what a distributed deployment is, on one machine: a real
// NATS server with JetStream (in the test process), a coordinator (a
// `taskd run --nats` process) on a root of task lists, and workers
// (`taskd worker` processes). Tests act on it through files, as users do,
// and kill its processes with SIGKILL.
type cluster struct {
	t       *testing.T
	nats    *natstest.Server
	dir     string // the test's directory
	root    string
	config  string
	coord   *proc
	workers map[string]*proc
	started time.Time
}

// A proc is a process of the cluster, its output kept for failures.
type proc struct {
	name string
	args []string
	env  []string // added to the test's environment
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// taskdBinary builds cmd/taskd once per test run.
func taskdBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "taskd-remote-test-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "taskd")
		out, err := exec.Command("go", "build", "-o", builtBin, "../../cmd/taskd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// newCluster starts a server and a coordinator serving lists, with the
// configuration's fields extra (merged into {"grace": "1s", "nats": …}).
func newCluster(t *testing.T, lists []string, extra map[string]any) *cluster {
	t.Helper()
	return newClusterOn(t, natstest.Start(t), lists, nil, extra)
}

// newClusterOn is newCluster on the server srv, with the configuration's
// "nats" section natsCfg (its url the server's). Workers are given the
// same file (--config).
func newClusterOn(t *testing.T, srv *natstest.Server, lists []string, natsCfg, extra map[string]any) *cluster {
	t.Helper()
	bin := taskdBinary(t)
	c := &cluster{t: t, nats: srv, dir: t.TempDir(), workers: map[string]*proc{}, started: time.Now()}
	c.root = filepath.Join(c.dir, "tasks")
	for _, l := range append([]string{""}, lists...) {
		if err := os.MkdirAll(filepath.Join(c.root, l), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"home", "config"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	section := map[string]any{"url": c.nats.URL()}
	for k, v := range natsCfg {
		section[k] = v
	}
	cfg := map[string]any{"grace": "1s", "concurrency": 8, "nats": section}
	for k, v := range extra {
		cfg[k] = v
	}
	data, _ := json.Marshal(cfg)
	c.config = filepath.Join(c.dir, "config", "config.json")
	if err := os.WriteFile(c.config, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c.coord = &proc{name: "coordinator", args: []string{bin, "run", "--root", c.root, "--config", c.config, "--log-level", "debug"}}
	c.start(c.coord)
	t.Cleanup(c.stopAll)
	return c
}

// worker starts a worker called name with the extra flags.
func (c *cluster) worker(name string, flags ...string) *proc {
	c.t.Helper()
	return c.workerWith(name, nil, flags...)
}

// workerWith starts a worker called name with the extra variables env
// and flags.
func (c *cluster) workerWith(name string, env []string, flags ...string) *proc {
	c.t.Helper()
	args := []string{taskdBinary(c.t), "worker", "--nats", c.nats.URL(), "--config", c.config, "--name", name,
		"--state", filepath.Join(c.dir, "state-"+name), "--ack-wait", "2s", "--grace", "1s", "--log-level", "debug"}
	p := &proc{name: name, args: append(args, flags...), env: env}
	c.workers[name] = p
	c.start(p)
	return p
}

func (c *cluster) start(p *proc) {
	c.t.Helper()
	p.cmd = exec.Command(p.args[0], p.args[1:]...)
	p.cmd.Env = append(os.Environ(),
		"HOME="+filepath.Join(c.dir, "home"), "XDG_CONFIG_HOME="+filepath.Join(c.dir, "config"),
		"XDG_STATE_HOME="+filepath.Join(c.dir, "state"), "TASKD_ROOT=")
	p.cmd.Env = append(p.cmd.Env, p.env...)
	if p.out == nil {
		p.out = &syncBuffer{}
	}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func() { p.cmd.Wait(); close(p.done) }()
}

// kill kills p with SIGKILL, as a crash would, and waits for it.
func (c *cluster) kill(p *proc) {
	c.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	<-p.done
	fmt.Fprintf(p.out, "--- killed with SIGKILL ---\n")
}

// restart starts p again, its output appended to what it wrote before.
func (c *cluster) restart(p *proc) {
	c.t.Helper()
	c.start(p)
}

// stopAll stops every process still running (SIGTERM, then SIGKILL), and
// the process groups their agents ran in.
func (c *cluster) stopAll() {
	procs := []*proc{c.coord}
	for _, w := range c.workers {
		procs = append(procs, w)
	}
	for _, p := range procs {
		select {
		case <-p.done:
			continue
		default:
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
	}
	if c.t.Failed() {
		for _, p := range procs {
			c.t.Logf("--- %s ---\n%s", p.name, p.out)
		}
	}
}

// logs is every process's output, for failure messages.
func (c *cluster) logs() string {
	var b strings.Builder
	for _, p := range append([]*proc{c.coord}, c.workerList()...) {
		fmt.Fprintf(&b, "--- %s ---\n%s\n", p.name, p.out)
	}
	return b.String()
}

func (c *cluster) workerList() []*proc {
	var out []*proc
	for _, w := range c.workers {
		out = append(out, w)
	}
	return out
}

func (c *cluster) listDir(l string) string { return filepath.Join(c.root, l) }

// drop writes a task file as a careful user does: elsewhere, then renamed.
func (c *cluster) drop(list, id, content string) {
	c.t.Helper()
	tmp := filepath.Join(c.listDir(list), "."+id+".drop")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(c.listDir(list), id+".json")); err != nil {
		c.t.Fatal(err)
	}
}

// read reads a task (nil if it cannot be read now).
func (c *cluster) read(list, id string) *taskfile.Task {
	t, err := taskfile.ReadFile(filepath.Join(c.listDir(list), id+".json"))
	if err != nil {
		return nil
	}
	return t
}

// waitFor polls cond until it holds or timeout passes.
func (c *cluster) waitFor(what string, timeout time.Duration, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %s waiting for %s\n%s", timeout, what, c.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitState waits until every task id of list is in state.
func (c *cluster) waitState(list string, ids []string, state task.State, timeout time.Duration) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%d tasks of %s to be %s", len(ids), list, state), timeout, func() bool {
		for _, id := range ids {
			if t := c.read(list, id); t == nil || task.Of(t) != state {
				return false
			}
		}
		return true
	})
}

// events reads a list's event log.
func (c *cluster) events(list string) []eventlog.Event {
	c.t.Helper()
	evs, err := eventlog.Read(c.listDir(list))
	if err != nil {
		c.t.Fatal(err)
	}
	return evs
}

// execTask is a task file for the exec profile running script in cwd.
func execTask(script, cwd string, extra map[string]any) string {
	td := map[string]any{"agent": "exec", "prompt": script, "cwd": cwd}
	tf := map[string]any{"subject": "remote", "owner": "taskd", "metadata": map[string]any{"taskd": td}}
	for k, v := range extra {
		if name, ok := strings.CutPrefix(k, "taskd."); ok {
			td[name] = v
		} else {
			tf[k] = v
		}
	}
	data, _ := json.Marshal(tf)
	return string(data)
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
