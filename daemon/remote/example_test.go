package remote_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/natstest"
)

// exampleDir holds the deployment example's files.
const exampleDir = "../../examples/distributed"

// example reads a file of the deployment example and replaces, in order,
// the placeholders of examples/distributed/README.md: nothing else of it
// changes.
func example(t *testing.T, name string, replace ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(exampleDir, name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for i := 0; i < len(replace); i += 2 {
		if !strings.Contains(s, replace[i]) {
			t.Fatalf("%s has no %q to replace", name, replace[i])
		}
		s = strings.ReplaceAll(s, replace[i], replace[i+1])
	}
	return s
}

// Ensure the deployment example runs as it is written: nats-server with
// the example's nats-server.conf (TLS) and users.conf, the coordinator
// with coordinator.json as its configuration, and two workers with
// worker.json and the command line of taskd-worker.service — only the
// README's placeholders replaced (address, directories, passwords, keys)
// — run tasks on the workers, in the directories --dir-map maps, and
// taskd workers lists both.
func TestExample_Deployment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	etc, store := filepath.Join(dir, "etc", "nats"), filepath.Join(dir, "var", "lib", "nats")
	if err := os.MkdirAll(etc, 0o700); err != nil {
		t.Fatal(err)
	}
	natstest.WriteTLS(t, etc)
	port := natstest.FreePort(t)
	conf := example(t, "nats-server.conf", "0.0.0.0:4222", "127.0.0.1:"+strconv.Itoa(port), "/var/lib/nats", store, "/etc/nats/", etc+"/")
	write(t, filepath.Join(etc, "nats-server.conf"), conf)
	write(t, filepath.Join(etc, "users.conf"), example(t, "users.conf"))
	natstest.StartProcessFile(t, filepath.Join(etc, "nats-server.conf"), port, store,
		"TASKD_COORDINATOR_PASSWORD=coordinator-pw", "TASKD_WORKER_PASSWORD=worker-pw")
	address := "127.0.0.1:" + strconv.Itoa(port)

	// The coordinator: ann's home, her task lists, her configuration.
	ann := filepath.Join(dir, "home", "ann")
	annConfig := filepath.Join(ann, ".config", "taskd")
	coordPub := keygen(t, filepath.Join(annConfig, "coordinator.nk"))
	copyFile(t, filepath.Join(etc, "ca.pem"), filepath.Join(annConfig, "ca.pem"))
	workers := []string{"w1", "w2"}
	homes := map[string]string{}
	var pubs []string
	for _, w := range workers {
		homes[w] = filepath.Join(dir, "home", "taskd-"+w)
		cfgDir := filepath.Join(homes[w], ".config", "taskd")
		pubs = append(pubs, keygen(t, filepath.Join(cfgDir, "worker.nk")))
		copyFile(t, filepath.Join(etc, "ca.pem"), filepath.Join(cfgDir, "ca.pem"))
		write(t, filepath.Join(cfgDir, "config.json"), example(t, "worker.json",
			"nats.example.com:4222", address, "WORKER-PASSWORD", "worker-pw", "COORDINATOR-PUBLIC-KEY", coordPub))
	}
	write(t, filepath.Join(annConfig, "config.json"), example(t, "coordinator.json",
		"nats.example.com:4222", address, "COORDINATOR-PASSWORD", "coordinator-pw",
		"WORKER-1-PUBLIC-KEY", pubs[0], "WORKER-2-PUBLIC-KEY", pubs[1], `, "WORKER-3-PUBLIC-KEY"`, ""))
	root := filepath.Join(ann, ".claude", "tasks")
	for _, d := range []string{filepath.Join(root, "demo"), filepath.Join(ann, "src", "app")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	c := &cluster{t: t, dir: dir, root: root, workers: map[string]*proc{}, started: time.Now()}
	t.Cleanup(c.stopAll)
	c.coord = &proc{name: "coordinator", args: []string{taskdBinary(t), "run"}, env: []string{"HOME=" + ann, "XDG_CONFIG_HOME=" + filepath.Join(ann, ".config")}}
	c.start(c.coord)

	// The workers: the unit's command line, with their homes and the
	// directory the coordinator's sources are in on them.
	unit := example(t, "taskd-worker.service")
	var execStart string
	for _, l := range strings.Split(unit, "\n") {
		if rest, ok := strings.CutPrefix(l, "ExecStart="); ok {
			execStart = rest
		}
	}
	for _, w := range workers {
		srv := filepath.Join(dir, "srv-"+w, "src")
		if err := os.MkdirAll(filepath.Join(srv, "app"), 0o700); err != nil {
			t.Fatal(err)
		}
		line := strings.NewReplacer("/usr/local/bin/taskd", taskdBinary(t), "/home/taskd", homes[w],
			"/home/ann/src", filepath.Join(ann, "src"), "/srv/src", srv).Replace(execStart)
		p := &proc{name: w, args: append(strings.Fields(line), "--name", w),
			env: []string{"HOME=" + homes[w], "XDG_STATE_HOME=" + filepath.Join(homes[w], ".local", "state"), "XDG_CONFIG_HOME=" + filepath.Join(homes[w], ".config")}}
		c.workers[w] = p
		c.start(p)
	}

	var ids []string
	for i := 1; i <= 4; i++ {
		id := strconv.Itoa(i)
		ids = append(ids, id)
		c.drop("demo", id, execTask(`pwd > where-$TASKD_TASK_ID; sleep 1`, filepath.Join(ann, "src", "app"), nil))
	}
	c.waitState("demo", ids, task.Succeeded, 2*time.Minute)
	ranOn := map[string]bool{}
	for _, id := range ids {
		_, w := remoteOf(filepath.Join(root, "demo", ".taskd", "runs", id, "1"))
		ranOn[w] = true
		where := filepath.Join(dir, "srv-"+w, "src", "app", "where-"+id)
		if data, err := os.ReadFile(where); err != nil || strings.TrimSpace(string(data)) != filepath.Dir(where) {
			t.Errorf("task %s did not run in the mapped directory on %s: %q, %v", id, w, data, err)
		}
	}
	if !ranOn["w1"] && !ranOn["w2"] {
		t.Errorf("no task ran on a worker: %v", ranOn)
	}
	out, code := c.taskdAs(ann, "workers")
	if code != 0 || !lineWith(out, "w1", "serving") || !lineWith(out, "w2", "serving") {
		t.Errorf("taskd workers (status %d):\n%s", code, out)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	write(t, to, string(data))
}

// keygen makes a key at path with taskd keygen, and returns its public
// key.
func keygen(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(taskdBinary(t), "keygen", path).Output()
	pub := strings.TrimSpace(string(out))
	if err != nil || len(pub) != 56 {
		t.Fatalf("taskd keygen %s: %v\n%s", path, err, out)
	}
	return pub
}

// taskdAs runs taskd with args as the user whose home is home, and
// returns its output and exit status.
func (c *cluster) taskdAs(home string, args ...string) (string, int) {
	c.t.Helper()
	cmd := exec.Command(taskdBinary(c.t), args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "TASKD_ROOT=")
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}
