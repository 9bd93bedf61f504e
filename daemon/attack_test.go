package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/proc"
)

// TestAttackCorpus runs every case of testdata/attacks on a daemon of its
// own, on a fresh root, as the daemon's user: each case sets up what an
// attacker (or an unlucky user) would, and then checks that the daemon
// did what the case expects, that the reason is where a user looks (a
// note in .taskd/rejected/, events.jsonl, taskd status --json, the task's
// error), that nothing beside the root changed (the sibling directories
// outside/, home/ and sandbox/ are compared with a snapshot taken before
// the daemon started), and that no secret kept there reached any file
// under the root.
func TestAttackCorpus(t *testing.T) {
	// Not parallel: each case sets HOME and the umask, which are the process's.
	paths, err := filepath.Glob(filepath.Join(attacksDir, "*.attack"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 60 {
		t.Errorf("the attack corpus has %d cases, want at least 60", len(paths))
	}
	var cases []attackCase
	for _, p := range paths {
		c, err := parseAttack(p)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	exe := taskdBinary(t)
	// Cases that set the umask, which is the process's, run one at a
	// time first; the others then run in parallel.
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.umask < 0 {
				t.Parallel()
			}
			if c.root && os.Geteuid() != 0 {
				t.Skip("needs root to chown")
			}
			if s := proc.Supervise(); c.cgroup && s.Mode() != proc.ByCgroup {
				t.Skipf("needs cgroups, and this machine gives none: %s", s)
			}
			runAttack(t, c, exe)
		})
	}
}

func runAttack(t *testing.T, c attackCase, exe string) {
	t.Logf("%s", c.about)
	env := newAttackEnv(t)
	if c.umask >= 0 {
		old := fsroot.SetUmask(c.umask)
		t.Cleanup(func() { fsroot.SetUmask(old) })
	}
	if !slices.ContainsFunc(c.before, func(op attackOp) bool { return op.verb == "list" }) {
		os.Mkdir(filepath.Join(env.root, "l"), 0o700)
	}
	for _, op := range c.before {
		if err := env.do(op); err != nil {
			t.Fatalf("%s %v: %v", op.verb, op.args, err)
		}
	}
	before := map[string]map[string]string{}
	for _, d := range []string{"outside", "home", "sandbox"} {
		before[d] = treeOf(filepath.Join(env.base, d))
	}
	taskFiles := treeOf(env.root)

	fc := &config.FileConfig{Grace: "2s"}
	_, configFails := expected(c, "config-fails")
	if c.config != "" || configFails {
		path := filepath.Join(env.base, "config.json")
		if c.config != "" {
			os.WriteFile(path, []byte(env.expand(c.config)), 0o600)
		}
		loaded, err := loadConfigWithin(t, path, 10*time.Second)
		if want, ok := expected(c, "config-fails"); ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("configuration error %v, want it to say %q", err, want)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		loaded.Grace = "2s"
		fc = loaded
	}
	cfg, err := config.NewConfig(env.root, nil, fc)
	if err != nil {
		t.Fatal(err)
	}
	if c.cli {
		cfg.Executable = exe
	}
	cfg.Home = env.vars["$HOME"]
	// The case's user database: home/other is another user's home.
	other := filepath.Join(env.base, "home", "other")
	cfg.OtherHomes = func(string) []string { return []string{other} }
	cfg.Dir = filepath.Join(env.base, "config", "taskd")
	cfg.StateDir = env.state
	h := &harness{t: t, root: env.root, cfg: cfg, logs: &syncBuffer{}}
	if want, ok := expected(c, "start-fails"); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := daemon.New(cfg, slog.New(slog.NewTextHandler(h.logs, nil))).Run(ctx)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("the daemon started with %v, want a refusal saying %q", err, want)
		}
	} else {
		h.start()
		t.Cleanup(h.stop)
	}
	for _, op := range c.after {
		if err := env.do(op); err != nil {
			t.Fatalf("%s %v: %v", op.verb, op.args, err)
		}
	}
	for _, op := range c.expect {
		checkExpectation(t, h, env, exe, op, taskFiles)
	}
	h.stop()

	for d, snap := range before {
		after := treeOf(filepath.Join(env.base, d))
		for p, was := range snap {
			if now, ok := after[p]; !ok || now != was {
				t.Errorf("outside the root, %s changed:\nbefore %.200q\nafter  %.200q", p, was, now)
			}
		}
		for p := range after {
			if _, ok := snap[p]; !ok {
				t.Errorf("outside the root, %s appeared", p)
			}
		}
	}
	filepath.Walk(env.root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if data, _ := os.ReadFile(p); bytes.Contains(data, []byte("SECRET-")) {
				t.Errorf("a secret reached %s", p)
			}
		}
		return nil
	})
}

// loadConfigWithin loads the configuration file at path, failing the test
// if that takes longer than d: a configuration file never makes taskd
// wait.
func loadConfigWithin(t *testing.T, path string, d time.Duration) (*config.FileConfig, error) {
	t.Helper()
	type loaded struct {
		fc  *config.FileConfig
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		fc, err := config.LoadFileConfig(path, false)
		done <- loaded{fc, err}
	}()
	select {
	case l := <-done:
		return l.fc, l.err
	case <-time.After(d):
		t.Fatalf("loading the configuration %s has not returned after %s", path, d)
		return nil, nil
	}
}

// cliWithin runs taskd with args, failing the test if it has not exited
// after d: no file makes a taskd command wait. It returns its output and
// error.
func cliWithin(t *testing.T, exe string, d time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, args...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("taskd %s has not exited after %s:\n%s", strings.Join(args, " "), d, out)
	}
	return string(out), err
}

// sizeOrErr is fi's size, or err.
func sizeOrErr(fi os.FileInfo, err error) any {
	if err != nil {
		return err
	}
	return fi.Size()
}

// expected returns the argument of the case's expectation verb, if any.
func expected(c attackCase, verb string) (string, bool) {
	for _, op := range c.expect {
		if op.verb == verb {
			return op.args[0], true
		}
	}
	return "", false
}

// checkExpectation waits for, or checks, one expectation.
func checkExpectation(t *testing.T, h *harness, env *attackEnv, exe string, op attackOp, taskFiles map[string]string) {
	t.Helper()
	a := op.args
	listOf := func(ref string) (string, string) {
		l, id, _ := strings.Cut(ref, "/")
		return l, id
	}
	const deadline = 30 * time.Second
	switch op.verb {
	case "rejected":
		l, id := listOf(a[0])
		text := waitNote(t, h, l, id+".json")
		if !strings.Contains(text, a[1]) || !strings.Contains(text, "How to fix it: ") {
			t.Errorf("the note on %s says\n%s\nwant %q and a fix", a[0], text, a[1])
		}
		h.waitFor("TaskRejected of "+a[0], deadline, func() bool {
			evs, _ := eventlog.Read(h.listDir(l))
			return countEvents(evs, eventlog.TaskRejected, id) == 1
		})
		p := filepath.Join(h.listDir(l), id+".json")
		if was, ok := taskFiles[p]; ok {
			if now := treeOf(p)[p]; now != was {
				t.Errorf("the rejected file %s changed:\nbefore %.300q\nafter  %.300q", p, was, now)
			}
		}
	case "misnamed":
		l, name := a[0], a[1]
		text := waitNote(t, h, l, name)
		if !strings.Contains(text, a[2]) || !strings.Contains(text, "How to fix it: ") {
			t.Errorf("the note on %q says\n%s\nwant %q and a fix", name, text, a[2])
		}
		h.waitFor("TaskRejected of "+name, deadline, func() bool {
			evs, _ := eventlog.Read(h.listDir(l))
			return slices.ContainsFunc(evs, func(e eventlog.Event) bool {
				return e.Type == eventlog.TaskRejected && e.Data["file"] == name
			})
		})
	case "refused":
		h.waitFor("the log to say the list is not served", deadline, func() bool {
			return strings.Contains(h.logs.String(), "not serving list")
		})
		out, err := exec.Command(exe, "status", "--json", "--root", env.root).Output()
		if err != nil {
			t.Fatalf("taskd status --json: %v", err)
		}
		var lists []status.List
		if err := json.Unmarshal(out, &lists); err != nil {
			t.Fatalf("taskd status --json: %v\n%s", err, out)
		}
		i := slices.IndexFunc(lists, func(l status.List) bool { return l.ID == a[0] })
		if i < 0 || !strings.Contains(lists[i].Refused+" "+lists[i].Fix, a[1]) || lists[i].Fix == "" {
			t.Errorf("taskd status --json says of list %s\n%s\nwant it refused saying %q, with a fix", a[0], out, a[1])
		}
	case "failed", "state":
		l, id := listOf(a[0])
		state := task.State(a[1])
		if op.verb == "failed" {
			state = task.Failed
		}
		tf := h.waitState(l, id, state, deadline)
		if op.verb == "failed" {
			msg, _ := tf.Metadata.Object("taskd").String("error")
			if !strings.Contains(msg, a[1]) {
				t.Errorf("task %s failed with %q, want it to say %q", a[0], msg, a[1])
			}
			h.waitEvents(l, eventlog.TaskFailed, id, 1)
		}
	case "output":
		l, id := listOf(a[0])
		var text string
		h.waitFor("the output of "+a[0]+" to say "+a[1], deadline, func() bool {
			dir := filepath.Join(h.listDir(l), ".taskd", "runs", id, "1")
			out, _ := os.ReadFile(filepath.Join(dir, "stdout.log"))
			errOut, _ := os.ReadFile(filepath.Join(dir, "stderr.log"))
			text = string(out) + string(errOut)
			return strings.Contains(text, a[1])
		})
	case "log":
		h.waitFor("the log to say "+a[0], deadline, func() bool { return strings.Contains(h.logs.String(), a[0]) })
	case "event":
		l, id := listOf(a[1])
		h.waitFor(a[0]+" of "+a[1]+" saying "+a[2], deadline, func() bool {
			evs, _ := eventlog.Read(h.listDir(l))
			return slices.ContainsFunc(evs, func(e eventlog.Event) bool {
				data, _ := json.Marshal(e.Data)
				return e.Type == a[0] && e.Task == id && strings.Contains(string(data), a[2])
			})
		})
	case "absent":
		if _, err := os.Lstat(env.path(a[0])); err == nil {
			t.Errorf("%s exists", a[0])
		}
	case "unchanged":
		p := env.path(a[0])
		if was, now := taskFiles[p], treeOf(p)[p]; was == "" || now != was {
			t.Errorf("%s changed under the root:\nbefore %.300q\nafter  %.300q", a[0], was, now)
		}
	case "mode":
		fi, err := os.Lstat(env.path(a[0]))
		if err != nil {
			t.Errorf("%s: %v, want mode %s", a[0], err, a[1])
		} else if got := fmt.Sprintf("%04o", fi.Mode().Perm()); got != a[1] {
			t.Errorf("%s: mode %s, want %s", a[0], got, a[1])
		}
	case "start-fails", "config-fails":
		// checked when the daemon was started
	case "held":
		l, id := listOf(a[0])
		var out string
		h.waitFor(a[0]+" to be held saying "+a[1], deadline, func() bool {
			out, _ = cliWithin(t, exe, 10*time.Second, "status", "--json", "--root", env.root, "--list", l)
			var lists []status.List
			json.Unmarshal([]byte(out), &lists)
			for _, list := range lists {
				for _, tk := range list.Tasks {
					if tk.ID == id && strings.Contains(tk.Held, a[1]) {
						return true
					}
				}
			}
			return false
		})
	case "submit-fails":
		out, err := cliWithin(t, exe, 10*time.Second, "submit", "--root", env.root, "--list", a[0], "--agent", "exec", "--subject", "submitted", "true")
		if err == nil || !strings.Contains(out, a[1]) {
			t.Errorf("taskd submit to list %s: %v\n%s\nwant it refused saying %q", a[0], err, out, a[1])
		}
	case "smaller":
		fi, err := os.Stat(env.path(a[0]))
		if limit, _ := strconv.ParseInt(a[1], 10, 64); err != nil || fi.Size() > limit {
			t.Errorf("%s: %v, want at most %s bytes", a[0], sizeOrErr(fi, err), a[1])
		}
	case "dead":
		var pid int
		h.waitFor("the pid in "+a[0], deadline, func() bool {
			data, _ := os.ReadFile(env.path(a[0]))
			pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
			return pid > 0
		})
		h.waitFor(fmt.Sprint("process ", pid, " to be gone"), deadline, func() bool { return !alivePid(pid) })
	case "doctor":
		out, _ := cliWithin(t, exe, 20*time.Second, "doctor", "--root", env.root)
		if !strings.Contains(out, a[0]) {
			t.Errorf("taskd doctor says\n%s\nwant %q", out, a[0])
		}
	}
}

// waitNote waits for the note on file name in list's .taskd/rejected/.
func waitNote(t *testing.T, h *harness, list, name string) string {
	t.Helper()
	var text []byte
	h.waitFor("a note on "+name, 30*time.Second, func() bool {
		var err error
		text, err = os.ReadFile(filepath.Join(h.listDir(list), ".taskd", "rejected", name+".txt"))
		return err == nil
	})
	return string(text)
}

// attackSecret is in the environment of the test process, and so of its
// daemons: what /proc/self/environ would show.
const attackSecret = "SECRET-ENV-5a6b"
