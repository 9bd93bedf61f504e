package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// runFile reads a file of run n of task id.
func (h *harness) runText(list, id string, n int, name string) string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join(h.listDir(list), ".taskd", "runs", id, itoa(n), name))
	if err != nil {
		h.t.Fatalf("run %d of %s: %v", n, id, err)
	}
	return string(data)
}

// stepRuns returns the run folders of the step trace entries for step, in
// order.
func stepRuns(t *taskfile.Task, step string) []int {
	var out []int
	for _, e := range traceOf(t) {
		if s, _ := e.String("step"); s == step {
			if _, ok := e.String("result"); ok {
				if by, _ := e.String("by"); by != "person" {
					n, _ := e.Int("attempt")
					out = append(out, int(n))
				}
			}
		}
	}
	return out
}

func traceOf(t *taskfile.Task) []*taskfile.Object {
	v, _ := t.Metadata.Object("taskd").Get("stepTrace")
	list, _ := v.([]any)
	var out []*taskfile.Object
	for _, e := range list {
		out = append(out, e.(*taskfile.Object))
	}
	return out
}

// scriptProfile is a profile that runs script with sh, the prompt on its
// standard input.
func scriptProfile(t *testing.T, name, script string) config.ProfileSpec {
	path := filepath.Join(t.TempDir(), name+".sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return config.ProfileSpec{Command: []string{"sh", path}, Prompt: "stdin"}
}

// A command gate fails with a distinctive message; the work step it sends
// the task back to is told the message, the gate, and its attempt number.
func TestSteer_GateReportReachesTheRetriedStep(t *testing.T) {
	t.Parallel()
	counter := filepath.Join(t.TempDir(), "count")
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"dev": scriptProfile(t, "dev", `cat >/dev/null; echo '{"success": true, "summary": "changed it"}'`)}
		fc.Agents = map[string]string{"Developer": "dev"}
	})
	h.addWorkflow("l", "gated", `{"id": "gated", "name": "gated", "nodes": {
  "start": {"type": "start"},
  "work": {"type": "task", "name": "Do the work", "agent": "Developer", "instructions": "Make the change."},
  "check": {"type": "gate", "name": "Run the checks", "maxRetries": 2,
            "command": "n=$(cat `+counter+` 2>/dev/null || echo 0); n=$((n+1)); echo $n > `+counter+`; echo checking; test $n -ge 2 || { echo 'lint: widget.go:7 misses its comma (ERR-7731)' >&2; exit 3; }"},
  "end": {"type": "end", "result": "success"},
  "hitl": {"type": "end", "result": "blocked", "escalation": "hitl"}},
 "edges": [{"from": "start", "to": "work"}, {"from": "work", "to": "check"},
  {"from": "check", "to": "end", "on": "passed"}, {"from": "check", "to": "work", "on": "failed"},
  {"from": "check", "to": "hitl", "on": "failed"}]}`)
	h.drop("l", "1", flowTask("1", "gated", "Add the widget", ""))
	tf := h.waitState("l", "1", task.Succeeded, 30*time.Second)
	work := stepRuns(tf, "work")
	if len(work) != 2 {
		t.Fatalf("work ran in %v, want two runs (trace %s)", work, steps(tf))
	}
	first, retried := h.runText("l", "1", work[0], "prompt.md"), h.runText("l", "1", work[1], "prompt.md")
	if strings.Contains(first, "Before this attempt") {
		t.Errorf("the first attempt was told of a failure:\n%s", first)
	}
	for _, want := range []string{
		"This is attempt 2 of this step.",
		`The step "Run the checks" (check) failed on its run 2`,
		"lint: widget.go:7 misses its comma (ERR-7731)",
		"exited with status 3",
		"checking",
	} {
		if !strings.Contains(retried, want) {
			t.Errorf("the retried step's prompt.md lacks %q:\n%s", want, retried)
		}
	}
}

// reviewWorkflow: work (Developer) → review gate (Reviewer) with one retry,
// then a human step whose only way on is passed (as quick-task's).
const reviewWorkflow = `{"id": "review", "name": "review", "nodes": {
  "start": {"type": "start"},
  "work": {"type": "task", "name": "Do the work", "agent": "Developer"},
  "review": {"type": "gate", "name": "Review", "agent": "Reviewer", "maxRetries": 1},
  "end": {"type": "end", "result": "success"},
  "hitl": {"type": "end", "result": "blocked", "escalation": "hitl", "name": "Needs a human"}},
 "edges": [{"from": "start", "to": "work"}, {"from": "work", "to": "review"},
  {"from": "review", "to": "end", "on": "passed"}, {"from": "review", "to": "work", "on": "failed"},
  {"from": "review", "to": "hitl", "on": "failed"}, {"from": "hitl", "to": "work", "on": "passed"}]}`

// A human step offers only the answers the workflow can take; one it has
// no edge for is refused, never looped on; a note given with an answer
// reaches the next step's prompt.
func TestSteer_ResolveWithANote(t *testing.T) {
	t.Parallel()
	counter := filepath.Join(t.TempDir(), "reviews")
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{
			"dev": scriptProfile(t, "dev", `cat >/dev/null; echo '{"success": true, "summary": "changed it"}'`),
			// The review fails twice, then passes.
			"rev": scriptProfile(t, "rev", `cat >/dev/null; n=$(cat `+counter+` 2>/dev/null || echo 0); n=$((n+1)); echo $n > `+counter+`
if [ $n -ge 3 ]; then echo '{"success": true, "summary": "fine"}'; else echo "{\"success\": false, \"summary\": \"review $n: the error path is untested\"}"; fi`),
		}
		fc.Agents = map[string]string{"Developer": "dev", "Reviewer": "rev"}
	})
	h.addWorkflow("l", "review", reviewWorkflow)
	h.drop("l", "1", flowTask("1", "review", "Handle the error", ""))
	tf := h.waitState("l", "1", task.NeedsHuman, 30*time.Second)
	hitl := tf.Metadata.Object("taskd").Object("hitl")
	if got := strings.Join(task.Strings(hitl, "options"), ","); got != "passed,leave" {
		t.Errorf("options %q, want passed,leave (the human step has no failed edge)", got)
	}
	dir := mustOpen(t, h.listDir("l"))
	ctx := context.Background()
	if _, err := control.ResolveNote(ctx, dir, "1", "failed", ""); err == nil || !strings.Contains(err.Error(), "answer one of: passed, leave") {
		t.Errorf("resolve failed: %v, want a refusal listing passed, leave", err)
	}
	// By hand, the same answer is refused by the daemon: the task keeps
	// waiting, with the reason, and does not ask again.
	if _, err := dir.Update(ctx, "1", func(t *taskfile.Task) error {
		t.Metadata.Object("taskd").Set("resolve", "failed")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the refusal", 10*time.Second, func() bool {
		r, _ := h.read("l", "1").Metadata.Object("taskd").Object("hitl").String("refused")
		return strings.Contains(r, `"failed" is not an answer here; answer passed or leave`)
	})
	if tf := h.read("l", "1"); stateOf(tf) != task.NeedsHuman {
		t.Errorf("after a refused answer the task is %s", stateOf(tf))
	}
	if n := countEvents(h.events("l"), eventlog.TaskNeedsHuman, "1"); n != 1 {
		t.Errorf("%d TaskNeedsHuman events: a refused answer asked again", n)
	}

	if _, err := control.ResolveNote(ctx, dir, "1", "passed", "NOTE-42: reuse the retry helper in errors.go"); err != nil {
		t.Fatal(err)
	}
	tf = h.waitState("l", "1", task.Succeeded, 30*time.Second)
	work := stepRuns(tf, "work")
	if len(work) != 3 {
		t.Fatalf("work ran in %v, want three runs (trace %s)", work, steps(tf))
	}
	prompt := h.runText("l", "1", work[2], "prompt.md")
	for _, want := range []string{"NOTE-42: reuse the retry helper in errors.go", "Given with the answer \"passed\" at hitl",
		"review 2: the error path is untested", "This is attempt 3 of this step."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the step after the answer was not told %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(h.runText("l", "1", work[1], "prompt.md"), "NOTE-42") {
		t.Errorf("the note reached a step before the answer")
	}
	var noted bool
	for _, e := range traceOf(tf) {
		if n, _ := e.String("note"); strings.HasPrefix(n, "NOTE-42") {
			noted = true
		}
	}
	if _, left := tf.Metadata.Object("taskd").Get("resolveNote"); left || !noted {
		t.Errorf("the note is not in the step trace (%v) or still pending (%v)", noted, left)
	}
}

// taskd restart runs a workflow again from its first step; the earlier
// steps stay in the trace and their run folders stay on disk.
func TestSteer_RestartFromTheFirstStep(t *testing.T) {
	t.Parallel()
	flag := filepath.Join(t.TempDir(), "pass")
	h := startDaemon(t, []string{"l"})
	h.addWorkflow("l", "two", `{"id": "two", "name": "two", "nodes": {
  "start": {"type": "start"},
  "prepare": {"type": "task", "name": "Prepare", "command": "echo preparing"},
  "check": {"type": "gate", "name": "Check", "maxRetries": 0, "command": "test -e `+flag+`"},
  "end": {"type": "end", "result": "success"},
  "hitl": {"type": "end", "result": "blocked", "escalation": "hitl"}},
 "edges": [{"from": "start", "to": "prepare"}, {"from": "prepare", "to": "check"},
  {"from": "check", "to": "end", "on": "passed"}, {"from": "check", "to": "hitl", "on": "failed"},
  {"from": "hitl", "to": "check", "on": "passed"}]}`)
	h.drop("l", "1", flowTask("1", "two", "Prepare and check", ""))
	h.waitState("l", "1", task.NeedsHuman, 20*time.Second)
	os.WriteFile(flag, nil, 0o644)
	dir := mustOpen(t, h.listDir("l"))
	if _, err := control.RestartTask(context.Background(), dir, "1"); err != nil {
		t.Fatal(err)
	}
	tf := h.waitState("l", "1", task.Succeeded, 20*time.Second)
	if got, want := steps(tf), "prepare:passed:advance check:failed:escalate ::restart prepare:passed:advance check:passed:advance"; got != want {
		t.Errorf("trace\n got %s\nwant %s", got, want)
	}
	if got := stepRuns(tf, "prepare"); len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("prepare ran in %v, want runs 1 and 3 (the run folders go on)", got)
	}
	for n := 1; n <= 4; n++ {
		h.runText("l", "1", n, "result.json")
	}
	if n := countEvents(h.waitEvents("l", eventlog.TaskSucceeded, "1", 1), eventlog.StepStarted, "1"); n != 4 {
		t.Errorf("%d steps started, want 4", n)
	}
}

// A workflow stops at a stage boundary without autonomy; continue walks on
// into the next stage, with the note in its first prompt.
func TestSteer_ContinuePastAStageBoundary(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"dev": scriptProfile(t, "dev", `cat >/dev/null; echo '{"success": true, "summary": "done"}'`)}
		fc.Agents = map[string]string{"Developer": "dev"}
	})
	h.addWorkflow("l", "staged", `{"id": "staged", "name": "staged", "nodes": {
  "start": {"type": "start"},
  "plan": {"type": "task", "name": "Plan", "agent": "Developer"},
  "planned": {"type": "end", "result": "success", "name": "Planned"},
  "build": {"type": "task", "name": "Build", "agent": "Developer"},
  "built": {"type": "end", "result": "success"}},
 "edges": [{"from": "start", "to": "plan"}, {"from": "plan", "to": "planned"},
  {"from": "planned", "to": "build", "on": "passed"}, {"from": "build", "to": "built"}]}`)
	h.drop("l", "1", flowTask("1", "staged", "Two stages", ""))
	tf := h.waitState("l", "1", task.Succeeded, 20*time.Second)
	b := tf.Metadata.Object("taskd").Object("boundary")
	if step, _ := b.String("step"); step != "planned" || currentStepOf(tf) != "planned" {
		t.Fatalf("stopped at %q with boundary %v", currentStepOf(tf), b)
	}
	dir := mustOpen(t, h.listDir("l"))
	if _, err := control.ResolveNote(context.Background(), dir, "1", "passed", ""); err == nil {
		t.Errorf("passed was accepted at a stage boundary")
	}
	if _, err := control.ResolveNote(context.Background(), dir, "1", "continue", "BUILD-NOTE: only the parser"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the second stage", 20*time.Second, func() bool {
		tf = h.read("l", "1")
		return stateOf(tf) == task.Succeeded && currentStepOf(tf) == "built"
	})
	if _, ok := tf.Metadata.Object("taskd").Get("boundary"); ok {
		t.Errorf("the boundary is still recorded at the final end")
	}
	build := stepRuns(tf, "build")
	if len(build) != 1 || !strings.Contains(h.runText("l", "1", build[0], "prompt.md"), "BUILD-NOTE: only the parser") {
		t.Errorf("build ran in %v without the note", build)
	}
	if got := steps(tf); got != "plan:passed:advance planned:passed:advance build:passed:advance" {
		t.Errorf("trace %s", got)
	}
	// With autonomy the workflow does not stop at the boundary.
	os.WriteFile(filepath.Join(h.listDir("l"), "3.json"), []byte(strings.Replace(flowTask("3", "staged", "Autonomous", ""), `"retryCount": 0`, `"retryCount": 0, "autonomy": true`, 1)), 0o644)
	h.waitFor("the autonomous task", 20*time.Second, func() bool {
		tf = h.read("l", "3")
		return stateOf(tf) == task.Succeeded && currentStepOf(tf) == "built"
	})
}

// taskd restart runs a loop again from its first iteration; its earlier
// run folders stay, and the new attempts are numbered after them.
func TestSteer_RestartALoop(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	cwd := t.TempDir()
	h.drop("l", "1", s2Task("/subtask {loop:2} echo x >> count", cwd, nil))
	h.waitState("l", "1", task.Succeeded, 20*time.Second)
	if _, err := control.RestartTask(context.Background(), mustOpen(t, h.listDir("l")), "1"); err != nil {
		t.Fatal(err)
	}
	h.waitEvents("l", eventlog.LoopExited, "1", 2)
	tf := h.waitState("l", "1", task.Succeeded, 20*time.Second)
	m := tf.Metadata.Object("taskd")
	n, _ := m.Int("loopIteration")
	attempt, _ := m.Int("attempt")
	if n != 2 || attempt != 4 || lines(t, filepath.Join(cwd, "count")) != "x x x x" {
		t.Errorf("after a restart: iteration %d, attempt %d, count %q; want 2, 4, four lines", n, attempt, lines(t, filepath.Join(cwd, "count")))
	}
	if strings.Contains(h.runText("l", "1", 3, "prompt.md"), "Before this iteration") {
		t.Errorf("the first iteration after the restart was told of one before it")
	}
}
