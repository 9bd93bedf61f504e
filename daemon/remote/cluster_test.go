package remote_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/disktest"
	"github.com/taskd/taskd/internal/natstest"
	"github.com/taskd/taskd/internal/syncbuf"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/taskfile"
)

// A cluster is what a distributed deployment is, on one machine: a real
// NATS server with JetStream — by default a nats-server process with the
// users and permissions of examples/distributed/users.conf, the
// coordinator logging in as "coordinator" and the workers as "worker" —
// a coordinator (a `taskd run --nats` process) on a root of task lists,
// and workers (`taskd worker` processes), each with its own key. Tests
// act on it through files, as users do, and kill its processes with
// SIGKILL.
type cluster struct {
	t        *testing.T
	nats     broker
	dir      string // the test's directory
	root     string
	config   string // the coordinator's configuration
	natsCfg  map[string]any
	coordKey string // the coordinator's public key
	keys     []string
	coord    *proc
	workers  map[string]*proc
	started  time.Time
	deniedOK bool // a test that tries what a role may not do
	// workerEnv is added to the environment of the workers started next.
	workerEnv []string
}

// A broker is the NATS server of a cluster: a process or embedded.
type broker interface {
	URL() string
	Stop()
	Restart()
}

// The passwords of the users of examples/distributed/users.conf in the
// tests.
const (
	coordinatorPassword = "coordinator-s3cret"
	workerPassword      = "worker-s3cret"
)

// heartbeat is how often a cluster's workers publish their heartbeat.
const heartbeat = 500 * time.Millisecond

// workerKeys is how many worker keys a cluster makes (and its
// coordinator trusts).
const workerKeys = 6

// A proc is a process of the cluster, its output kept for failures.
type proc struct {
	name string
	args []string
	env  []string // over the cluster's environment
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan struct{}
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// TestMain removes the binary taskdBinary built, once every test is done.
func TestMain(m *testing.M) {
	code := disktest.RunWithRuntimeDir(m)
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

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
		args := []string{"build", "-o", builtBin}
		if raceEnabled {
			// The coordinator's and the workers' code runs in these
			// processes: under -race, they are built with it too.
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, "../../cmd/taskd")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// usersConf is the example's file of users and permissions.
func usersConf(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("../../examples/distributed/users.conf")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startServer starts a nats-server process with the example's users.
func startServer(t testing.TB) *natstest.Process {
	t.Helper()
	users, err := os.ReadFile(usersConf(t))
	if err != nil {
		t.Fatal(err)
	}
	return natstest.StartProcess(t, string(users),
		"TASKD_COORDINATOR_PASSWORD="+coordinatorPassword, "TASKD_WORKER_PASSWORD="+workerPassword)
}

// newCluster starts a server and a coordinator serving lists, with the
// configuration's fields extra (merged into {"grace": "1s", "nats": …}).
func newCluster(t *testing.T, lists []string, extra map[string]any) *cluster {
	t.Helper()
	return newClusterOn(t, startServer(t), lists, nil, extra)
}

// newClusterOn is newCluster on the server srv, with the configuration's
// "nats" section natsCfg (its url the server's; nil: the example's users).
// Workers are given the same section, with their own keys.
func newClusterOn(t *testing.T, srv broker, lists []string, natsCfg, extra map[string]any) *cluster {
	t.Helper()
	bin := taskdBinary(t)
	c := &cluster{t: t, nats: srv, dir: t.TempDir(), workers: map[string]*proc{}, started: time.Now(), natsCfg: natsCfg}
	c.root = filepath.Join(c.dir, "tasks")
	for _, l := range append([]string{""}, lists...) {
		if err := os.MkdirAll(filepath.Join(c.root, l), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"home", "config", "keys"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if c.coordKey, _, err = remote.Keygen(filepath.Join(c.dir, "keys", "coordinator.nk")); err != nil {
		t.Fatal(err)
	}
	for i := range workerKeys {
		k, _, err := remote.Keygen(filepath.Join(c.dir, "keys", fmt.Sprintf("worker%d.nk", i)))
		if err != nil {
			t.Fatal(err)
		}
		c.keys = append(c.keys, k)
	}
	section := c.section("coordinator")
	section["signingKey"] = filepath.Join(c.dir, "keys", "coordinator.nk")
	section["workerKeys"] = c.keys
	section["lostAfter"] = "5s"
	section["ackWait"] = "2s"
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

// section is the nats section of the configuration of a process of role
// ("coordinator" or "worker"): the server's url, and how it logs in.
func (c *cluster) section(role string) map[string]any {
	section := map[string]any{"url": c.nats.URL()}
	if c.natsCfg == nil {
		section["user"] = role
		section["password"] = map[string]string{"coordinator": coordinatorPassword, "worker": workerPassword}[role]
	}
	for k, v := range c.natsCfg {
		section[k] = v
	}
	return section
}

// editConfig changes the coordinator's configuration file with edit.
func (c *cluster) editConfig(edit func(cfg map[string]any)) {
	c.t.Helper()
	data, err := os.ReadFile(c.config)
	if err != nil {
		c.t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		c.t.Fatal(err)
	}
	edit(cfg)
	if data, err = json.Marshal(cfg); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(c.config, data, 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// workerConfig writes the configuration file of worker name, whose key is
// the next one the coordinator trusts, with extra fields; it returns its
// path.
func (c *cluster) workerConfig(name string, extra map[string]any) string {
	c.t.Helper()
	i := len(c.workers)
	section := c.section("worker")
	section["coordinatorKeys"] = []string{c.coordKey}
	section["signingKey"] = filepath.Join(c.dir, "keys", fmt.Sprintf("worker%d.nk", i%workerKeys))
	cfg := map[string]any{"nats": section}
	for k, v := range extra {
		cfg[k] = v
	}
	data, _ := json.Marshal(cfg)
	path := filepath.Join(c.dir, "config", "worker-"+name+".json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		c.t.Fatal(err)
	}
	return path
}

// worker starts a worker called name with the extra flags.
func (c *cluster) worker(name string, flags ...string) *proc {
	c.t.Helper()
	return c.workerWith(name, nil, flags...)
}

// workerWith starts a worker called name with the extra fields of its
// configuration file and flags.
func (c *cluster) workerWith(name string, extra map[string]any, flags ...string) *proc {
	c.t.Helper()
	if p := c.workers[name]; p != nil {
		c.t.Fatalf("worker %s exists", name)
	}
	config := c.workerConfig(name, extra)
	args := []string{taskdBinary(c.t), "worker", "--config", config, "--name", name,
		"--state", filepath.Join(c.dir, "state-"+name), "--heartbeat", heartbeat.String(), "--grace", "1s", "--log-level", "debug"}
	p := &proc{name: name, args: append(args, flags...), env: c.workerEnv}
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
		p.out = &syncbuf.Buffer{}
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
		c.stopProc(p)
	}
	for _, p := range procs {
		if out := p.out.String(); strings.Contains(out, "WARNING: DATA RACE") {
			c.t.Errorf("%s has a data race:\n%s", p.name, out)
		}
		if out := p.out.String(); strings.Contains(out, "permission denied by the NATS server") && !c.deniedOK {
			c.t.Errorf("%s was denied a permission its role should have:\n%s", p.name, out)
		}
	}
	if c.t.Failed() || os.Getenv("TASKD_TEST_LOGS") != "" {
		for _, p := range procs {
			c.t.Logf("--- %s ---\n%s", p.name, p.out)
		}
	}
}

// stopProc stops p if it runs: SIGTERM, then SIGKILL.
func (c *cluster) stopProc(p *proc) {
	select {
	case <-p.done:
		return
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
	c.dropIn(c.root, list, id, content)
}

// dropIn is drop into the list of another root.
func (c *cluster) dropIn(root, list, id, content string) {
	c.t.Helper()
	tmp := filepath.Join(root, list, "."+id+".drop")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(root, list, id+".json")); err != nil {
		c.t.Fatal(err)
	}
}

// taskState is the state of the task file at path ("" if it cannot be
// read).
func taskState(path string) task.State {
	t, err := taskfile.ReadFile(path)
	if err != nil {
		return ""
	}
	return task.Of(t)
}

func itoa(n int) string { return strconv.Itoa(n) }

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
	if !waitfor.Within(timeout, cond) {
		c.t.Fatalf("timed out after %s waiting for %s\n%s", timeout, what, c.logs())
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
