package daemon_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/proc"
	"github.com/taskd/taskd/internal/proctest"
)

// TestProcs_WorktreesUnderSubreaper: fifty tasks at once, each in a git
// worktree of its own on one repository, each leaving orphans that come
// back to the daemon (its child subreaper) and a notification command run
// for each end. Every git command the daemon runs, and every notification
// command, gets its own exit status: none is taken by the reaper of
// orphans ("waitid: no child processes"), so every task succeeds, every
// notification is made, and the log has no failure.
func TestProcs_WorktreesUnderSubreaper(t *testing.T) {
	t.Parallel()
	const n = 50
	repo := gitRepo(t)
	root := newRoot(t, "l")
	marks := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	data, _ := json.Marshal(config.FileConfig{Notify: &config.NotifySpec{
		Command:   []string{"sh", "-c", `(sleep 0.01 &) ; echo "$TASKD_TASK_ID" >> ` + marks + `/notified`},
		Succeeded: true,
	}})
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	taskdBinary(t)
	h := &procHarness{harness: &harness{t: t, root: root, logs: &syncBuffer{}}}
	h.p = startDaemonProc(t, root, n, "TASKD_TEST_CONFIG="+cfgPath)
	h.logs = h.p.log
	// Each agent leaves orphans that exit while the daemon's git commands
	// run: the reaper has work all along.
	script := `for i in 1 2 3 4 5; do (sleep 0.0$i &); done; git rev-parse --abbrev-ref HEAD > ` + marks + `/branch-$TASKD_TASK_ID`
	for i := 1; i <= n; i++ {
		h.drop("l", fmt.Sprint(i), execTask(fmt.Sprint("worktree ", i), script, "taskd.cwd", `"`+repo+`"`, "taskd.worktree", "true"))
	}
	for i := 1; i <= n; i++ {
		tf := waitEnded(h.harness, "l", fmt.Sprint(i), 3*time.Minute)
		if s := task.Of(tf); s != task.Succeeded {
			t.Errorf("task %d is %s: %s", i, s, tdString(tf, "error"))
			continue
		}
		if b := readString(marks, fmt.Sprint("branch-", i)); !strings.HasPrefix(b, "taskd/") {
			t.Errorf("task %d ran on branch %q, want its own", i, b)
		}
	}
	h.waitFor("every end to be notified", time.Minute, func() bool {
		return strings.Count(readString(marks, "notified"), "\n") >= n
	})
	h.stopProc()
	log := h.p.log.String()
	for _, bad := range []string{"no child processes", "notification command failed"} {
		if strings.Contains(log, bad) {
			t.Errorf("the daemon's log says %q:\n%s", bad, log)
		}
	}
}

// escapeScript is an agent whose processes leave its process group and
// its session: one started with setsid in the background, one twice
// forked (its parent gone, it comes back to the daemon) with its
// environment cleared when clearEnv (then only a cgroup can find it).
// Each writes its pid to m/a and m/b; then the agent sleeps.
func escapeScript(m string, clearEnv bool) string {
	env := ""
	if clearEnv {
		env = "env -i PATH=$PATH "
	}
	return `setsid sh -c 'echo $$ > ` + m + `/a.tmp; mv ` + m + `/a.tmp ` + m + `/a; exec sleep 300' &
(` + env + `setsid sh -c 'echo $$ > ` + m + `/b.tmp; mv ` + m + `/b.tmp ` + m + `/b; exec sleep 300' &)
while [ ! -e ` + m + `/a ] || [ ! -e ` + m + `/b ]; do sleep 0.01; done
sleep 300`
}

// needTool skips the test when the program name is not on PATH, or, with
// TASKD_REQUIRE_TOOLS=1, fails it.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s is not installed, and TASKD_REQUIRE_TOOLS=1", name)
		}
		t.Skipf("skipping: %s is not installed", name)
	}
}

// supervisionModes are the ways a daemon keeps an attempt's processes
// together: by cgroup where this machine lets it (else that case is
// skipped, saying why), and by environment, which never is.
func supervisionModes(t *testing.T) map[string][]string {
	t.Helper()
	modes := map[string][]string{"environment": {"TASKD_SUPERVISION=environment"}}
	if s := proc.Supervise(); s.Mode() == proc.ByCgroup {
		modes["cgroup"] = nil
	} else {
		t.Logf("no cgroup here: only the environment's fallback is tested (%s)", s)
	}
	return modes
}

// TestProcs_EscapedProcessesDie: an agent's processes that left its
// process group and session (setsid, a double fork) die with the attempt
// however it ends — cancelled, timed out, the daemon stopped, the daemon
// killed (then the next daemon kills them before it handles the attempt)
// — in a cgroup of the attempt's own, where one can be had, else found by
// their environment. A process that cleared its environment is found by
// its cgroup. An attempt's cgroup is removed once empty.
func TestProcs_EscapedProcessesDie(t *testing.T) {
	t.Parallel()
	needTool(t, "setsid")
	for mode, env := range supervisionModes(t) {
		for _, end := range []string{"cancel", "timeout", "stop", "crash"} {
			t.Run(mode+"/"+end, func(t *testing.T) {
				t.Parallel()
				escapedProcessesDie(t, mode, end, env)
			})
		}
	}
}

func escapedProcessesDie(t *testing.T, mode, end string, env []string) {
	root := newRoot(t, "l")
	m := t.TempDir()
	taskdBinary(t)
	h := &procHarness{harness: &harness{t: t, root: root, logs: &syncBuffer{}}}
	h.p = startDaemonProc(t, root, 2, env...)
	h.logs = h.p.log
	extra := []string{}
	if end == "timeout" {
		extra = append(extra, "taskd.timeout", `"3s"`)
	}
	h.drop("l", "1", execTask("escapes", escapeScript(m, mode == "cgroup"), extra...))
	h.waitFor("the escaped processes to start", 30*time.Second, func() bool {
		return fileExists(filepath.Join(m, "a")) && fileExists(filepath.Join(m, "b"))
	})
	a, b := readPid(t, filepath.Join(m, "a")), readPid(t, filepath.Join(m, "b"))
	runDir := filepath.Join(root, "l", ".taskd", "runs", "1", "1")
	var rec struct {
		PID    int    `json:"pid"`
		Cgroup string `json:"cgroup"`
	}
	h.waitFor("cmd.json to record the started agent", 10*time.Second, func() bool {
		return json.Unmarshal([]byte(readString(runDir, "cmd.json")), &rec) == nil && strings.Contains(readString(runDir, "cmd.json"), `"pid"`)
	})
	if got := rec.Cgroup != ""; got != (mode == "cgroup") {
		t.Fatalf("cmd.json records cgroup %q in the %s mode", rec.Cgroup, mode)
	}
	switch end {
	case "cancel":
		if out, err := exec.Command(taskdBinary(t), "cancel", "--root", root, "l/1").CombinedOutput(); err != nil {
			t.Fatalf("taskd cancel: %v\n%s", err, out)
		}
		h.waitState("l", "1", task.Cancelled, 30*time.Second)
	case "timeout":
		h.waitState("l", "1", task.TimedOut, 30*time.Second)
	case "stop":
		h.stopProc()
	case "crash":
		// Nothing kills them while no daemon runs: once the daemon is
		// reaped every signal its death sends is sent, and the agent it
		// started has died of its own (its parent-death signal); then they
		// still run, with no signal on its way to end them.
		h.p.kill(t)
		h.waitFor("the agent to die with the daemon", 30*time.Second, func() bool { return !proctest.Running(rec.PID) })
		if !alivePid(a) || !alivePid(b) || proctest.Doomed(a) || proctest.Doomed(b) {
			t.Fatalf("the escaped processes died with the daemon: nothing left to check")
		}
		h.p = startDaemonProc(t, root, 2, env...)
		h.logs = h.p.log
	}
	h.waitFor("the escaped processes to die", 20*time.Second, func() bool { return !alivePid(a) && !alivePid(b) })
	if rec.Cgroup != "" {
		h.waitFor("the attempt's cgroup to be removed", 20*time.Second, func() bool {
			_, err := os.Stat(rec.Cgroup)
			return errors.Is(err, fs.ErrNotExist)
		})
	}
	if end == "crash" {
		h.stopProc()
	}
}
