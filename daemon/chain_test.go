package daemon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// s2Task is an exec task whose prompt (and optional metadata.taskd fields)
// use subtask2's features; the shell runs in cwd.
func s2Task(prompt, cwd string, fields map[string]any) string {
	td := map[string]any{"agent": "exec", "prompt": prompt, "cwd": cwd}
	for k, v := range fields {
		td[k] = v
	}
	b, _ := json.Marshal(map[string]any{"subject": "subtask2", "owner": "taskd", "metadata": map[string]any{"taskd": td}})
	return string(b)
}

func lines(t *testing.T, path string) string {
	t.Helper()
	data, _ := os.ReadFile(path)
	return strings.Join(strings.Fields(string(data)), " ")
}

// waitLines waits until path holds want (its words, space-joined).
func (h *harness) waitLines(path, want string, timeout time.Duration) {
	h.t.Helper()
	h.waitFor(path+" to be "+want, timeout, func() bool {
		data, _ := os.ReadFile(path)
		return strings.Join(strings.Fields(string(data)), " ") == want
	})
}

func TestChain_ReturnsInOrder(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	cwd := t.TempDir()
	h.drop("l", "1", s2Task("echo O >> f", cwd, map[string]any{"return": []string{"echo A >> f", "echo B >> f", "echo A >> f"}}))
	h.waitLines(filepath.Join(cwd, "f"), "O A B A", 30*time.Second)
	origin := h.waitState("l", "1", task.Succeeded, 10*time.Second)
	if done, _ := origin.Metadata.Object("taskd").Bool("returnsDone"); !done {
		t.Errorf("returnsDone not recorded")
	}
	// Three return tasks, each blocked by the one before, all succeeded.
	prev := "1"
	for i := 1; i <= 3; i++ {
		id := findNamed(t, h, "l", "1-r"+strconv.Itoa(i))
		tf := h.waitState("l", id, task.Succeeded, 10*time.Second)
		if got := strings.Join(tf.BlockedBy, ","); got != prev {
			t.Errorf("return %d blockedBy %q, want %q", i, got, prev)
		}
		prev = id
	}
}

// findNamed returns the id of the task named name (metadata.taskd.name).
func findNamed(t *testing.T, h *harness, list, name string) string {
	t.Helper()
	var id string
	h.waitFor("a task named "+name, 10*time.Second, func() bool {
		for _, tid := range mustList(t, h.listDir(list)) {
			if n, _ := h.read(list, tid).Metadata.Object("taskd").String("name"); n == name {
				id = tid
				return true
			}
		}
		return false
	})
	return id
}

func TestChain_NestedReturnsRunFirst(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	cwd := t.TempDir()
	h.drop("l", "1", s2Task("/subtask {return:/subtask {return:echo N1 >> f || echo N2 >> f} echo R1 >> f || echo R2 >> f} echo O >> f", cwd, nil))
	h.waitLines(filepath.Join(cwd, "f"), "O R1 N1 N2 R2", 30*time.Second)
	// The block was compiled into fields.
	origin := h.read("l", "1")
	if v, _ := origin.Metadata.Object("taskd").Get("return"); v == nil {
		t.Errorf("the /subtask block was not compiled into metadata.taskd.return")
	}
	// Nothing ran twice: wait until everything is done and look again.
	for _, n := range []string{"1-r1", "1-r2", "1-r3", "1-r4"} {
		h.waitState("l", findNamed(t, h, "l", n), task.Succeeded, 10*time.Second)
	}
	if got := lines(t, filepath.Join(cwd, "f")); got != "O R1 N1 N2 R2" {
		t.Errorf("f = %q", got)
	}
}

func TestChain_Loops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	judge := filepath.Join(dir, "judge.sh")
	// A scripted judge: the condition holds once the counter file has three
	// lines. It records the prompt it was given.
	os.WriteFile(judge, []byte(`cat > "$TASKD_RUN_DIR/given.md"
if [ "$(wc -l < count)" -ge 3 ]; then echo 'looks done <subtask2 loop=break/>'; else echo 'not yet'; fi
`), 0o755)
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"judge-script": {Command: []string{"sh", judge}, Prompt: "stdin"}}
		fc.Agents = map[string]string{"judge": "judge-script"}
	})
	tests := []struct {
		id, prompt string
		runs       int
		exit       string
	}{
		{"1", "/subtask {loop:5} echo x >> count", 5, "max_reached"},
		{"2", "/subtask {until:the counter has three lines && loop:5} echo x >> count", 3, "satisfied"},
		{"3", "/subtask {loop:5 && untilCommand:test $(wc -l < count) -ge 2} echo x >> count", 2, "satisfied"},
		{"4", "/subtask {until:never && loop:2} echo x >> count; rm -f nothing", 2, "max_reached"},
	}
	cwds := map[string]string{}
	for _, tt := range tests {
		cwds[tt.id] = t.TempDir()
		if tt.id == "4" {
			os.WriteFile(judge+".never", nil, 0o644)
		}
		h.drop("l", tt.id, s2Task(tt.prompt, cwds[tt.id], nil))
	}
	for _, tt := range tests {
		tf := h.waitState("l", tt.id, task.Succeeded, 60*time.Second)
		m := tf.Metadata.Object("taskd")
		n, _ := m.Int("loopIteration")
		exit, _ := m.String("loopExit")
		attempt, _ := m.Int("attempt")
		count := lines(t, filepath.Join(cwds[tt.id], "count"))
		if int(n) != tt.runs || exit != tt.exit || int(attempt) != tt.runs || len(strings.Fields(count)) != tt.runs {
			t.Errorf("task %s: %d iterations (attempt %d, %d runs), exit %q; want %d, %q", tt.id, n, attempt, len(strings.Fields(count)), exit, tt.runs, tt.exit)
		}
		evs := h.waitEvents("l", "LoopExited", tt.id, 1)
		if got := countEvents(evs, "LoopIteration", tt.id); got != tt.runs {
			t.Errorf("task %s: %d LoopIteration events, want %d", tt.id, got, tt.runs)
		}
	}
	// The judge was given the condition verbatim and the iteration count.
	given, _ := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", "2", "2", "judge", "given.md"))
	for _, want := range []string{"<user-condition>\nthe counter has three lines\n</user-condition>", "run 2 of at most 5 times", "echo x >> count"} {
		if !strings.Contains(string(given), want) {
			t.Errorf("judge prompt lacks %q:\n%s", want, given)
		}
	}
	var cmd struct{ Argv []string }
	raw, _ := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", "2", "1", "judge", "cmd.json"))
	json.Unmarshal(raw, &cmd)
	if len(cmd.Argv) != 2 || cmd.Argv[1] != judge {
		t.Errorf("judge argv = %v", cmd.Argv)
	}
}

func TestChain_ParallelWithAFailingChild(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	cwd := t.TempDir()
	h.drop("l", "1", s2Task("/subtask {parallel:sleep 0.3; echo P1 >> p || exit 3 || echo P3 >> p && return:echo R >> f} echo O >> f", cwd, nil))
	tf := h.waitState("l", "1", task.Succeeded, 30*time.Second)
	h.waitLines(filepath.Join(cwd, "f"), "O R", 20*time.Second)
	if got := lines(t, filepath.Join(cwd, "p")); got != "P3 P1" && got != "P1 P3" {
		t.Errorf("parallel output %q", got)
	}
	want := map[string]task.State{"1-p1": task.Succeeded, "1-p2": task.Failed, "1-p3": task.Succeeded}
	for name, state := range want {
		if s := stateOf(h.read("l", findNamed(t, h, "l", name))); s != state {
			t.Errorf("%s ended %q, want %q", name, s, state)
		}
	}
	if n, _ := tf.Metadata.Object("taskd").Int("attempt"); n != 1 {
		t.Errorf("the task ran %d times; parallel items do not make it run again", n)
	}
	// The return ran only after every parallel child had ended.
	evs := h.waitEvents("l", eventlog.TaskSucceeded, findNamed(t, h, "l", "1-r1"), 1)
	var lastChild, returnStart time.Time
	for _, e := range evs {
		if (e.Type == eventlog.TaskSucceeded || e.Type == eventlog.TaskFailed) && e.Parent == "1" && e.TS.After(lastChild) {
			lastChild = e.TS
		}
		if e.Type == eventlog.TaskStarted && e.Task == findNamed(t, h, "l", "1-r1") {
			returnStart = e.TS
		}
	}
	if !returnStart.After(lastChild) {
		t.Errorf("the return started at %v, before the last parallel child ended at %v", returnStart, lastChild)
	}
}

func TestChain_NamedResults(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	cwd := t.TempDir()
	h.drop("l", "1", s2Task("echo start", cwd, map[string]any{"return": []string{
		"/subtask {as:plan} echo the plan is ready",
		`echo "got: $RESULT[plan]" > plan.txt`,
	}}))
	h.waitFor("plan.txt", 30*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(cwd, "plan.txt"))
		return string(data) == "got: the plan is ready\n"
	})
	h.drop("l", "5", s2Task(`echo "$RESULT[nope]"`, cwd, nil))
	tf := h.waitState("l", "5", task.Failed, 10*time.Second)
	if e, _ := tf.Metadata.Object("taskd").String("error"); !strings.Contains(e, "nope") {
		t.Errorf("error = %q, want it to name the unknown result", e)
	}
}

func TestChain_Auto(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.sh")
	os.WriteFile(good, []byte(`cat > "$TASKD_RUN_DIR/asked.md"
echo 'I will write it and then record it.'
printf '<subtask2 auto="true">\n/subtask {agent:exec && return:echo R >> f} echo W >> f\n</subtask2>\n'
`), 0o755)
	bad := filepath.Join(dir, "bad.sh")
	os.WriteFile(bad, []byte("echo 'just do it'\n"), 0o755)
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{
			"planner":     {Command: []string{"sh", good}, Prompt: "stdin"},
			"bad-planner": {Command: []string{"sh", bad}, Prompt: "stdin"},
		}
	})
	cwd := t.TempDir()
	auto := func(agentName string) string {
		b, _ := json.Marshal(map[string]any{"subject": "auto", "owner": "taskd", "metadata": map[string]any{"taskd": map[string]any{
			"agent": agentName, "cwd": cwd, "prompt": "/subtask {auto:true} write a line and then a second one"}}})
		return string(b)
	}
	h.drop("l", "1", auto("planner"))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	if got := lines(t, filepath.Join(cwd, "f")); got != "W R" {
		t.Errorf("f = %q, want the planned workflow's lines", got)
		for _, id := range mustList(t, h.listDir("l")) {
			data, _ := os.ReadFile(filepath.Join(h.listDir("l"), id+".json"))
			cmd, _ := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", id, "1", "cmd.json"))
			t.Logf("%s: %s\n%s", id, data, cmd)
		}
	}
	asked, _ := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", "1", "1", "asked.md"))
	if !strings.Contains(string(asked), "write a line and then a second one") || !strings.Contains(string(asked), `<subtask2 auto="true">`) {
		t.Errorf("the planner was asked:\n%s", asked)
	}
	plan := h.read("l", findNamed(t, h, "l", "1-plan"))
	if p, _ := plan.Metadata.Object("taskd").String("prompt"); !strings.HasPrefix(p, "/subtask {agent:exec && return:echo R >> f}") {
		t.Errorf("plan prompt = %q", p)
	}

	h.drop("l", "2", auto("bad-planner"))
	tf := h.waitState("l", "2", task.Failed, 30*time.Second)
	if e, _ := tf.Metadata.Object("taskd").String("error"); !strings.Contains(e, "holds no usable workflow") {
		t.Errorf("error = %q", e)
	}
	if out, _ := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", "2", "1", "stdout.log")); string(out) != "just do it\n" {
		t.Errorf("the planner's output was not kept: %q", out)
	}
}

// TestChain_OneUnit: a task and its return chain are one unit. While the
// chain runs the task waits (in_progress), and a task blocked by it waits
// too; the task's outcome is the chain's: a failed step fails it, naming
// the step, the steps after the failed one do not run, and its dependent
// fails with it. Cancelling the task (taskd cancel, as a person does)
// while its chain runs stops the step that runs and cancels the chain.
func TestChain_OneUnit(t *testing.T) {
	t.Parallel()
	h := startDaemonWithCLI(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 4 })
	cwd := t.TempDir()
	gate := filepath.Join(t.TempDir(), "go")
	h.drop("l", "1", s2Task("echo O >> f", cwd, map[string]any{"return": []string{
		"echo A >> f; while [ ! -e " + gate + " ]; do sleep 0.02; done",
		"echo B >> f; exit 3",
		"echo C >> f",
	}}))
	h.drop("l", "9", execTask("after the unit", "echo D >> "+filepath.Join(cwd, "f"), "blockedBy", `["1"]`))
	h.waitLines(filepath.Join(cwd, "f"), "O A", 30*time.Second)
	if tf := h.read("l", "1"); stateOf(tf) != task.Waiting || tf.Status != taskfile.StatusInProgress {
		t.Errorf("while its chain runs the task is %s/%q, want in_progress and waiting", tf.Status, stateOf(tf))
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	origin := h.waitState("l", "1", task.Failed, 30*time.Second)
	if e := tdString(origin, "error"); !strings.Contains(e, "step 2 of its return chain (1-r2, task ") || !strings.Contains(e, "failed") || !strings.Contains(e, "exit status 3") {
		t.Errorf("the task's error %q does not name the failed step and why", e)
	}
	if done, _ := origin.Metadata.Object("taskd").Bool("returnsDone"); done || origin.Status == taskfile.StatusCompleted {
		t.Errorf("a task whose chain failed is %s, returnsDone %v", origin.Status, done)
	}
	h.waitState("l", findNamed(t, h, "l", "1-r3"), task.Failed, 30*time.Second)
	h.waitState("l", "9", task.Failed, 30*time.Second) // its file has no status: pending
	if got := lines(t, filepath.Join(cwd, "f")); got != "O A B" {
		t.Errorf("f = %q, want the chain stopped at its failed step and nothing after it run", got)
	}

	// Cancelled while its chain runs: the chain is cancelled with it.
	cwd2 := t.TempDir()
	pidFile := filepath.Join(cwd2, "pid")
	h.drop("l", "20", s2Task("echo O >> f", cwd2, map[string]any{"return": []string{
		"echo $$ > " + pidFile + "; exec sleep 60",
		"echo B >> f",
	}}))
	h.waitFor("the chain's first step to run", 30*time.Second, func() bool { return readString(cwd2, "pid") != "" })
	if out, err := exec.Command(taskdBinary(t), "cancel", "--root", h.root, "l/20").CombinedOutput(); err != nil {
		t.Fatalf("taskd cancel: %v\n%s", err, out)
	}
	origin = h.waitState("l", "20", task.Cancelled, 30*time.Second)
	if e := tdString(origin, "error"); !strings.Contains(e, "while its return chain ran") {
		t.Errorf("the cancelled task's error %q does not say its chain ran", e)
	}
	for _, name := range []string{"20-r1", "20-r2"} {
		step := h.waitState("l", findNamed(t, h, "l", name), task.Cancelled, 30*time.Second)
		if e := tdString(step, "error"); !strings.Contains(e, "task 20 above it was cancelled") {
			t.Errorf("step %s: error %q, want it to name the cancelled task", name, e)
		}
	}
	assertGone(h, pidFile)
	if got := lines(t, filepath.Join(cwd2, "f")); got != "O" {
		t.Errorf("f = %q: a step after the cancel ran", got)
	}
}
