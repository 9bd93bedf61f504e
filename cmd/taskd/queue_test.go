package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/parallel"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/clock"
	"github.com/taskd/taskd/taskfile"
)

// t0 is when the tests' fake clocks start: a Monday noon, local time,
// far from the time the suite runs at.
var t0 = time.Date(2031, 3, 3, 12, 0, 0, 0, time.Local)

// runDaemonCtx runs taskd run on root with configuration file cfg, and
// ctx's clock, until the returned stop is called (or the test ends).
func runDaemonCtx(t *testing.T, ctx context.Context, root, cfg string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	log := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"run", "--root", root, "--config", cfg, "--log-level", "debug"}, &bytes.Buffer{}, log)
	}()
	waitUntil(t, "the daemon to take the root", time.Minute, func() bool { held, _, _ := daemon.LockHolder(root); return held })
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("taskd run: %v\n%s", err, log.String())
		}
	}
	t.Cleanup(stop)
	return stop
}

// cliAt runs taskd with args and ctx (its clock), failing the test on a
// non-zero exit.
func cliAt(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := exitCode(run(ctx, args, &out, &errOut), &errOut); code != 0 {
		t.Fatalf("taskd %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// queueRoot makes a root with list l and a configuration file of the
// exec profile only, and returns both.
func queueRoot(t *testing.T, config string) (root, cfg string) {
	t.Helper()
	isolate(t)
	root = filepath.Join(t.TempDir(), "tasks")
	if err := os.MkdirAll(filepath.Join(root, "l"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(t.TempDir(), "config.json")
	writeTask(t, cfg, config)
	return root, cfg
}

func taskState(t *testing.T, path string) task.State {
	tf, err := taskfile.ReadFile(path)
	if err != nil {
		return ""
	}
	return task.Of(tf)
}

// TestSubmit_InAcrossRestart: taskd submit --in 3s, with the daemon's
// clock, writes notBefore three seconds on; taskd status shows when it
// starts; it has not started at +2s, nor after the daemon is started
// again, and starts at +3s.
func TestSubmit_InAcrossRestart(t *testing.T) {
	root, cfg := queueRoot(t, `{"scheduling": "normal", "defaultAgent": "exec"}`)
	clk := clock.NewFake(t0)
	ctx := withClock(context.Background(), clk)
	stop := runDaemonCtx(t, ctx, root, cfg)
	later := strings.TrimSpace(cliAt(t, ctx, "submit", "--root", root, "--list", "l", "--in", "3s", "true"))
	tf := readTaskFile(t, later)
	if at, _ := tf.Metadata.Object("taskd").String("notBefore"); at != task.Stamp(t0.Add(3*time.Second)) {
		t.Fatalf("notBefore %q, want %s", at, task.Stamp(t0.Add(3*time.Second)))
	}
	text := cliAt(t, ctx, "status", "--root", root, "--color", "never")
	if !strings.Contains(text, "scheduled") || !strings.Contains(text, "starts: at 12:00, not before") {
		t.Errorf("status does not say when the task starts:\n%s", text)
	}
	control := func() {
		t.Helper()
		c := strings.TrimSpace(cliAt(t, ctx, "submit", "--root", root, "--list", "l", "true"))
		waitUntil(t, "the control task", time.Minute, func() bool { return taskState(t, c) == task.Succeeded })
	}
	clk.Advance(2 * time.Second)
	control()
	if s := taskState(t, later); s != task.None {
		t.Fatalf("at +2s the task is %s", s)
	}
	stop()
	runDaemonCtx(t, ctx, root, cfg)
	control()
	if s := taskState(t, later); s != task.None {
		t.Fatalf("after a restart at +2s the task is %s", s)
	}
	clk.Advance(time.Second)
	waitUntil(t, "the task at +3s", time.Minute, func() bool { return taskState(t, later) == task.Succeeded })
}

// TestPause_CLI: taskd pause --all holds every task submitted, which
// status shows on the list and on each task with the command that lifts
// it; taskd resume --all lets them run. A pause file that is a FIFO or a
// link blocks nothing and is never followed: the daemon runs, and taskd
// pause replaces it with its own file.
func TestPause_CLI(t *testing.T) {
	root, cfg := queueRoot(t, `{"scheduling": "normal", "defaultAgent": "exec"}`)
	ctx := context.Background()
	pf := filepath.Join(root, pausefile.Name)
	if err := syscall.Mkfifo(pf, 0o600); err != nil {
		t.Fatal(err)
	}
	runDaemonCtx(t, ctx, root, cfg)
	first := strings.TrimSpace(cliAt(t, ctx, "submit", "--root", root, "--list", "l", "true"))
	waitUntil(t, "a task while the pause file is a FIFO", time.Minute, func() bool { return taskState(t, first) == task.Succeeded })

	out := cliAt(t, ctx, "pause", "--root", root, "--all", "--reason", "a demo")
	if !strings.Contains(out, "everything: paused") {
		t.Errorf("pause said %q", out)
	}
	if fi, err := os.Lstat(pf); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the pause file is not the command's own: %v %v", fi, err)
	}
	var held []string
	for range 3 {
		held = append(held, strings.TrimSpace(cliAt(t, ctx, "submit", "--root", root, "--list", "l", "true")))
	}
	waitUntil(t, "status to show the pause", time.Minute, func() bool {
		var lists []status.List
		json.Unmarshal([]byte(cliAt(t, ctx, "status", "--root", root, "--json")), &lists)
		n := 0
		for _, l := range lists {
			for _, ts := range l.Tasks {
				if ts.Pause != nil && ts.Pause.What == "everything" && ts.Pause.Resume == "taskd resume --all" {
					n++
				}
			}
		}
		return n == 3
	})
	text := cliAt(t, ctx, "status", "--root", root, "--color", "never")
	for _, want := range []string{"paused: everything is paused (taskd pause): a demo", "resume now: taskd resume --all"} {
		if !strings.Contains(text, want) {
			t.Errorf("status does not say %q:\n%s", want, text)
		}
	}
	for _, f := range held {
		if s := taskState(t, f); s != task.None {
			t.Fatalf("task %s is %s while everything is paused", f, s)
		}
	}
	if out := cliAt(t, ctx, "resume", "--root", root, "--all"); !strings.Contains(out, "everything: pause lifted (a demo)") {
		t.Errorf("resume said %q", out)
	}
	for _, f := range held {
		waitUntil(t, "a task held by the pause", time.Minute, func() bool { return taskState(t, f) == task.Succeeded })
	}
	var out2, errOut bytes.Buffer
	if code := exitCode(run(ctx, []string{"resume", "--root", root, "--all"}, &out2, &errOut), &errOut); code != 1 {
		t.Errorf("resume of nothing paused: exit %d, want 1 (%s)", code, errOut.String())
	}

	// A link in place of the pause file's lock is refused, never followed.
	lock := filepath.Join(root, pausefile.LockName)
	os.Remove(lock)
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, lock); err != nil {
		t.Fatal(err)
	}
	errOut.Reset()
	if code := exitCode(run(ctx, []string{"pause", "--root", root, "l"}, &out2, &errOut), &errOut); code != 1 || !strings.Contains(errOut.String(), "not a regular file") {
		t.Errorf("pause with a linked lock: exit %d: %s", code, errOut.String())
	}
	if _, err := os.Lstat(target); err == nil {
		t.Errorf("the lock's link was followed")
	}
}

// TestParallel_CLI: taskd parallel writes the root's parallel file, shows
// what is in force, goes back to the configuration with default, and
// refuses numbers out of range, a hostile list name, and a file in the
// way that is not a regular one.
func TestParallel_CLI(t *testing.T) {
	root, cfg := queueRoot(t, `{"concurrency": 3, "lists": {"l": {"concurrency": 2}}, "profiles": {"slow": {"command": ["sh", "-c"], "prompt": "arg", "concurrency": 1}}}`)
	ctx := context.Background()
	if out := cliAt(t, ctx, "parallel", "--root", root, "l", "1"); out != "list l: 1 at once\n" {
		t.Errorf("parallel l 1 said %q", out)
	}
	cliAt(t, ctx, "parallel", "--root", root, "--profile", "slow", "4")
	cliAt(t, ctx, "parallel", "--root", root, "--all", "6")
	rec, err := parallel.Read(root)
	if err != nil || rec.All != 6 || rec.Lists["l"] != 1 || rec.Profiles["slow"] != 4 {
		t.Fatalf("the file holds %+v, %v", rec, err)
	}
	shown := cliAt(t, ctx, "parallel", "--root", root, "--config", cfg)
	for _, want := range []string{"all: 6 (taskd parallel; the configuration says 3)", "list l: 1 (taskd parallel; the configuration says 2)", "profile slow: 4 (taskd parallel; the configuration says 1)"} {
		if !strings.Contains(shown, want) {
			t.Errorf("parallel shows no %q:\n%s", want, shown)
		}
	}
	cliAt(t, ctx, "parallel", "--root", root, "l", "default")
	if rec, _ := parallel.Read(root); rec.Lists["l"] != 0 {
		t.Errorf("default left %+v", rec)
	}
	for _, args := range [][]string{{"l", "0"}, {"l", "1025"}, {"l", "-3"}, {"../../etc", "2"}, {"--all"}, {"l"}, {"--profile", "x", "--all", "2"}} {
		var out, errOut bytes.Buffer
		if code := exitCode(run(ctx, append([]string{"parallel", "--root", root}, args...), &out, &errOut), &errOut); code != 2 {
			t.Errorf("parallel %v: exit %d, want 2 (%s)", args, code, errOut.String())
		}
	}
	pf := filepath.Join(root, parallel.Name)
	os.Remove(pf)
	if err := syscall.Mkfifo(pf, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- exitCode(run(ctx, []string{"parallel", "--root", root, "l", "2"}, &out, &errOut), &errOut)
	}()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(errOut.String(), "not a regular file") {
			t.Errorf("parallel with a FIFO in place: exit %d: %s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("parallel blocked on a FIFO")
	}
}

// TestClean_Tasks: tasks run by a daemon end; 40 days later (on the
// clock taskd runs with) taskd clean --tasks removes the file and run
// folders of the one that succeeded, and keeps the one that failed,
// which a pending task is blocked by, a recent one, and a task that is
// not taskd's. Once nothing waits for the failed one, the daemon's own
// retention removes it when it starts.
func TestClean_Tasks(t *testing.T) {
	root, cfg := queueRoot(t, `{"scheduling": "normal", "defaultAgent": "exec"}`)
	clk := clock.NewFake(t0)
	ctx := withClock(context.Background(), clk)
	stop := runDaemonCtx(t, ctx, root, cfg)
	list := filepath.Join(root, "l")
	ok := strings.TrimSpace(cliAt(t, ctx, "submit", "--root", root, "--list", "l", "true"))
	bad := strings.TrimSpace(cliAt(t, ctx, "submit", "--root", root, "--list", "l", "false"))
	badID := strings.TrimSuffix(filepath.Base(bad), ".json")
	writeTask(t, filepath.Join(list, "50.json"), `{"subject": "after the failed one", "owner": "taskd", "blockedBy": ["`+badID+`"], "metadata": {"taskd": {"agent": "exec", "prompt": "true", "onBlockerFailure": "wait"}}}`)
	writeTask(t, filepath.Join(list, "51.json"), `{"subject": "a person's", "status": "completed", "blocks": [], "blockedBy": []}`)
	waitUntil(t, "the tasks to end", time.Minute, func() bool {
		return taskState(t, ok) == task.Succeeded && taskState(t, bad) == task.Failed
	})
	clk.Advance(40 * 24 * time.Hour)
	recent := strings.TrimSpace(cliAt(t, ctx, "submit", "--root", root, "--list", "l", "true"))
	waitUntil(t, "the recent task", time.Minute, func() bool { return taskState(t, recent) == task.Succeeded })
	okID := strings.TrimSuffix(filepath.Base(ok), ".json")
	runs := filepath.Join(list, ".taskd", "runs", okID)
	if _, err := os.Stat(runs); err != nil {
		t.Fatalf("no run folder to remove: %v", err)
	}

	dry := cliAt(t, ctx, "clean", "--root", root, "--tasks", "--dry-run")
	if !strings.Contains(dry, "would remove task l/"+okID+" (succeeded 40 days ago)") || strings.Contains(dry, "l/"+badID+" ") {
		t.Errorf("clean --tasks --dry-run said:\n%s", dry)
	}
	if _, err := os.Stat(ok); err != nil {
		t.Fatalf("--dry-run removed the task: %v", err)
	}
	out := cliAt(t, ctx, "clean", "--root", root, "--tasks", "-v")
	if !strings.Contains(out, "removed task l/"+okID) || !strings.Contains(out, "l: removed 1 ended task") {
		t.Errorf("clean --tasks said:\n%s", out)
	}
	if _, err := os.Stat(ok); err == nil {
		t.Errorf("the old succeeded task is still there")
	}
	if _, err := os.Stat(runs); err == nil {
		t.Errorf("its run folders are still there")
	}
	for _, keep := range []string{bad, recent, filepath.Join(list, "50.json"), filepath.Join(list, "51.json")} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}

	stop()
	if err := os.Remove(filepath.Join(list, "50.json")); err != nil {
		t.Fatal(err)
	}
	runDaemonCtx(t, ctx, root, cfg)
	waitUntil(t, "the daemon's retention to remove the failed task", time.Minute, func() bool {
		_, err := os.Stat(bad)
		return err != nil
	})
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("the daemon's retention removed the recent task")
	}
}

// TestStatus_Queue: taskd status shows a task's priority, a task held by
// its list's window (read from --config) with when it opens, and a
// schedule with its next run and its runs; --json has the same.
func TestStatus_Queue(t *testing.T) {
	root, cfg := queueRoot(t, `{"lists": {"night": {"windows": ["22:00-07:00"]}}}`)
	ctx := withClock(context.Background(), clock.NewFake(t0))
	list := filepath.Join(root, "l")
	writeTask(t, filepath.Join(list, "1.json"), `{"subject": "urgent", "owner": "taskd", "metadata": {"taskd": {"prompt": "x", "priority": 5}}}`)
	writeTask(t, filepath.Join(list, "2.json"), `{"subject": "nightly bump", "owner": "taskd", "metadata": {"taskd": {"prompt": "x", "schedule": "0 2 * * *",
		"recurrence": {"for": "0 2 * * *", "next": "`+task.Stamp(t0.Add(14*time.Hour))+`", "lastRun": "7", "runs": 3}}}}`)
	writeTask(t, filepath.Join(root, "night", "1.json"), `{"subject": "overnight", "owner": "taskd", "metadata": {"taskd": {"prompt": "x"}}}`)
	text := cliAt(t, ctx, "status", "--root", root, "--config", cfg, "--color", "never")
	for _, want := range []string{
		"[+5] urgent",
		"recurring",
		"schedule: 0 2 * * * · next run Tue 02:00",
		"3 runs made, the last 7",
		"waiting for: list night starts tasks in its windows only (22:00-07:00); the next opens at 22:00",
	} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("status does not say %q:\n%s", want, text)
		}
	}
	var lists []status.List
	if err := json.Unmarshal([]byte(cliAt(t, ctx, "status", "--root", root, "--config", cfg, "--json")), &lists); err != nil {
		t.Fatal(err)
	}
	got := map[string]status.Task{}
	for _, l := range lists {
		for _, ts := range l.Tasks {
			got[l.ID+"/"+ts.ID] = ts
		}
	}
	if ts := got["l/1"]; ts.Priority != 5 {
		t.Errorf("l/1: priority %d", ts.Priority)
	}
	if ts := got["l/2"]; ts.Schedule != "0 2 * * *" || !ts.NextRun.Equal(t0.Add(14*time.Hour)) || ts.RunsMade != 3 {
		t.Errorf("l/2: %+v", ts.Queue)
	}
	if ts := got["night/1"]; !strings.Contains(ts.Window, "22:00-07:00") {
		t.Errorf("night/1: window %q", ts.Window)
	}
	compact := cliAt(t, ctx, "ls", "--root", root, "--config", cfg, "--color", "never")
	if strings.Contains(compact, "waiting for:") || !strings.Contains(compact, "[+5] urgent") {
		t.Errorf("ls is not one line per task:\n%s", compact)
	}
}

// TestPause_Profile: taskd pause --profile holds the tasks whose agent
// runs with that profile, which status shows with the reason, while a
// task of another profile in the same list runs; taskd resume with the
// bare name (no list of that name is paused) lifts it, and they run.
// taskd submit --priority writes the task's priority; a priority that is
// not a whole number is refused.
func TestPause_Profile(t *testing.T) {
	root, cfg := queueRoot(t, `{"scheduling": "normal", "defaultAgent": "exec", "profiles": {"slow": {"command": ["sh", "-c"], "prompt": "arg"}}}`)
	ctx := context.Background()
	runDaemonCtx(t, ctx, root, cfg)
	out := cliAt(t, ctx, "pause", "--root", root, "--config", cfg, "--profile", "slow", "--reason", "maintenance")
	if !strings.Contains(out, "profile slow: paused") {
		t.Errorf("pause said %q", out)
	}
	held := strings.TrimSpace(cliAt(t, ctx, "submit", "--root", root, "--list", "l", "--agent", "slow", "--priority", "7", "true"))
	if p, _ := readTaskFile(t, held).Metadata.Object("taskd").Int("priority"); p != 7 {
		t.Errorf("--priority 7 wrote priority %d", p)
	}
	other := strings.TrimSpace(cliAt(t, ctx, "submit", "--root", root, "--list", "l", "true"))
	waitUntil(t, "the task of another profile", time.Minute, func() bool { return taskState(t, other) == task.Succeeded })
	if s := taskState(t, held); s != task.None {
		t.Fatalf("the task of the paused profile is %s", s)
	}
	text := strings.Join(strings.Fields(cliAt(t, ctx, "status", "--root", root, "--config", cfg, "--color", "never")), " ")
	for _, want := range []string{"profile slow is paused (taskd pause): maintenance", "[+7]"} {
		if !strings.Contains(text, want) {
			t.Errorf("status does not say %q:\n%s", want, text)
		}
	}
	if out := cliAt(t, ctx, "resume", "--root", root, "slow"); !strings.Contains(out, "profile slow: pause lifted (maintenance)") {
		t.Errorf("resume slow said %q", out)
	}
	waitUntil(t, "the task of the profile resumed", time.Minute, func() bool { return taskState(t, held) == task.Succeeded })

	var o, e bytes.Buffer
	if code := exitCode(run(ctx, []string{"submit", "--root", root, "--list", "l", "--priority", "high", "true"}, &o, &e), &e); code != 2 {
		t.Errorf("--priority high: exit %d, want 2 (%s)", code, e.String())
	}
}

// TestSubmit_RefusesWhatTheDaemonRejects: taskd submit refuses a task the
// daemon would reject (a timeout of 0s, a negative one, one beyond what
// taskd can wait), with the daemon's reason, and writes nothing. Before,
// it wrote the file and the daemon rejected it.
func TestSubmit_RefusesWhatTheDaemonRejects(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "tasks")
	ctx := context.Background()
	for _, tt := range []struct{ flags []string }{
		{[]string{"--timeout", "0s"}},
		{[]string{"--timeout", "-1s"}},
		{[]string{"--timeout", "3000000h"}},
	} {
		var o, e bytes.Buffer
		args := append(append([]string{"submit", "--root", root, "--list", "l", "--agent", "exec"}, tt.flags...), "true")
		if code := exitCode(run(ctx, args, &o, &e), &e); code != 2 || !strings.Contains(e.String(), "metadata.taskd.timeout") {
			t.Errorf("%v: exit %d, want 2 with the reason (%s)", tt.flags, code, e.String())
		}
	}
	if files, _ := filepath.Glob(filepath.Join(root, "l", "*.json")); len(files) != 0 {
		t.Errorf("refused tasks were written: %v", files)
	}
}
