package flow_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/flow"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/job/jobtest"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
	"github.com/taskd/taskd/workflows"
)

// workflowTask is a task file of taskd's walking workflow wf in cwd.
func workflowTask(id, wf, cwd string) string {
	return `{"id":"` + id + `","subject":"s","status":"pending","owner":"taskd","metadata":{"workflowType":"` + wf + `","taskd":{"cwd":"` + cwd + `"}}}`
}

// makefile writes the Makefile the command-check workflow runs.
func makefile(t *testing.T, h *jobtest.Harness, build, test string) {
	t.Helper()
	data := "build:\n\t" + build + "\ntest:\n\t" + test + "\n"
	if err := os.WriteFile(filepath.Join(h.Cwd, "Makefile"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// trace is a task's step trace, one "step result action" a step.
func trace(h *jobtest.Harness, id string) []string {
	v, _ := h.Read(id).Metadata.Object("taskd").Get("stepTrace")
	var out []string
	for _, e := range v.([]any) {
		o := e.(*taskfile.Object)
		step, _ := o.String("step")
		result, _ := o.String("result")
		action, _ := o.String("action")
		out = append(out, strings.TrimSpace(step+" "+result+" "+action))
	}
	return out
}

// TestRun_CommandCheck: a workflow of command steps (the built-in
// command-check) walked to its end by one job: its gate retried once,
// escalated to a person when it keeps failing.
func TestRun_CommandCheck(t *testing.T) {
	for _, tt := range []struct {
		name, build, test string
		state             task.State
		status            string
		trace             []string
		step              string // metadata.currentStep at the end
	}{
		{name: "all pass", build: "echo built", test: "echo tested", state: task.Succeeded, status: taskfile.StatusCompleted,
			trace: []string{"build passed advance", "test passed advance"}, step: "end_success"},
		{name: "the build fails", build: "false", test: "echo tested", state: task.NeedsHuman, status: taskfile.StatusPending,
			trace: []string{"build failed escalate"}, step: "hitl_failed"},
		{name: "a flaky test", build: "echo built", test: "test -f .ran || { touch .ran; false; }", state: task.Succeeded, status: taskfile.StatusCompleted,
			trace: []string{"build passed advance", "test failed retry", "test passed advance"}, step: "end_success"},
		{name: "the tests keep failing", build: "echo built", test: "false", state: task.NeedsHuman, status: taskfile.StatusPending,
			trace: []string{"build passed advance", "test failed retry", "test failed escalate"}, step: "hitl_failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			makefile(t, h, tt.build, tt.test)
			h.Put("1", workflowTask("1", "command-check", h.Cwd))
			if _, err := h.Do(flow.Tasks{}, "1", job.Run); err != nil {
				t.Fatalf("Run = %v\n%s", err, h.Log)
			}
			tf := h.Read("1")
			step, _ := tf.Metadata.String("currentStep")
			if task.Of(tf) != tt.state || tf.Status != tt.status || step != tt.step {
				t.Errorf("ended %q (%s) at %s; want %q (%s) at %s\n%s", task.Of(tf), tf.Status, step, tt.state, tt.status, tt.step, h.Taskd("1"))
			}
			if got := trace(h, "1"); !slices.Equal(got, tt.trace) {
				t.Errorf("trace %q, want %q", got, tt.trace)
			}
			if tt.state == task.NeedsHuman {
				hitl := tf.Metadata.Object("taskd").Object("hitl")
				opts := task.Strings(hitl, "options")
				if !slices.Equal(opts, []string{"passed", "leave"}) {
					t.Errorf("a person is offered %v", opts)
				}
			}
			for n := 1; n <= len(tt.trace); n++ {
				if h.RunFile("1", n, "result.json") == "" {
					t.Errorf("step %d has no result.json", n)
				}
			}
		})
	}
}

// TestAnswer: a person's answer at the human step: passed walks the
// workflow on (here back to the build, now fixed); leave keeps it
// waiting; an answer not offered is refused and the task keeps waiting.
func TestAnswer(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	makefile(t, h, "false", "echo tested")
	h.Put("1", workflowTask("1", "command-check", h.Cwd))
	if _, err := h.Do(flow.Tasks{}, "1", job.Run); err != nil {
		t.Fatal(err)
	}
	answer := func(a, note string) {
		t.Helper()
		if _, err := h.List.Dir.Update(t.Context(), "1", func(t *taskfile.Task) error {
			task.Meta(t).Set("resolve", a)
			if note != "" {
				task.Meta(t).Set("resolveNote", note)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Do(flow.Tasks{}, "1", job.Answer); err != nil && err != job.ErrNotRunnable {
			t.Fatalf("Answer(%s) = %v", a, err)
		}
	}

	answer("maybe", "")
	tf := h.Read("1")
	refused, _ := tf.Metadata.Object("taskd").Object("hitl").String("refused")
	if task.Of(tf) != task.NeedsHuman || !strings.Contains(refused, `"maybe" is not an answer here`) {
		t.Errorf("after a refused answer: %q, refused %q", task.Of(tf), refused)
	}
	answer("leave", "")
	if got := task.Of(h.Read("1")); got != task.NeedsHuman {
		t.Errorf("after leave: %q, want needs_human", got)
	}
	makefile(t, h, "echo fixed", "echo tested")
	answer("passed", "the build is fixed")
	tf = h.Read("1")
	if task.Of(tf) != task.Succeeded {
		t.Fatalf("after passed: %q\n%s", task.Of(tf), h.Taskd("1"))
	}
	got := trace(h, "1")
	if want := []string{"build failed escalate", "hitl_failed passed advance", "build passed advance", "test passed advance"}; !slices.Equal(got, want) {
		t.Errorf("trace %q, want %q", got, want)
	}
	if !slices.Contains(h.Events("1"), "HumanResolved") {
		t.Errorf("no HumanResolved event: %v", h.Events("1"))
	}
}

// forky forks into two gates checked by commands, joined all-pass.
const forky = `{"id":"forky","name":"Forky","nodes":{
 "start":{"type":"start","name":"Start"},
 "fork":{"type":"fork","name":"Fork","join":"join","branches":{"a":{"entryStep":"step_a","description":"A"},"b":{"entryStep":"step_b","description":"B"}}},
 "step_a":{"type":"gate","name":"A","command":"test -f a.ok"},
 "step_b":{"type":"gate","name":"B","command":"test -f b.ok"},
 "join":{"type":"join","name":"Join","fork":"fork","strategy":"all-pass"},
 "end_success":{"type":"end","result":"success","name":"Done"},
 "end_failed":{"type":"end","result":"failure","name":"Failed"}},
 "edges":[{"from":"start","to":"fork"},{"from":"fork","to":"step_a"},{"from":"fork","to":"step_b"},{"from":"step_a","to":"join"},{"from":"step_b","to":"join"},
  {"from":"join","to":"end_success","on":"passed"},{"from":"join","to":"end_failed","on":"failed"}]}`

// TestFork: a fork starts its branches as child tasks and the task waits;
// each branch runs to the join; the join decides once all have ended.
func TestFork(t *testing.T) {
	for _, tt := range []struct {
		name     string
		ok       []string // the files that make the gates pass
		branches map[string]string
		state    task.State
	}{
		{"all pass", []string{"a.ok", "b.ok"}, map[string]string{"a": "passed", "b": "passed"}, task.Succeeded},
		{"one fails", []string{"a.ok"}, map[string]string{"a": "passed", "b": "failed"}, task.Failed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			wfDir := area.WorkflowsDir(h.List.Path())
			if err := os.MkdirAll(wfDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(wfDir, "forky.json"), []byte(forky), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, f := range tt.ok {
				if err := os.WriteFile(filepath.Join(h.Cwd, f), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			h.Put("1", workflowTask("1", "forky", h.Cwd))
			if _, err := h.Do(flow.Tasks{}, "1", job.Run); err != nil {
				t.Fatal(err)
			}
			if got := task.Of(h.Read("1")); got != task.Waiting {
				t.Fatalf("after the fork: %q, want waiting\n%s", got, h.Taskd("1"))
			}
			ids, _ := h.List.Dir.List()
			if len(ids) != 3 {
				t.Fatalf("tasks %v, want the task and two branches", ids)
			}
			got := map[string]string{}
			for _, id := range ids[1:] {
				if _, err := h.Do(flow.Tasks{}, id, job.Run); err != nil {
					t.Fatal(err)
				}
				b := h.Read(id)
				name, _ := b.Metadata.String("branchName")
				parent, _ := b.Metadata.String("parentTaskId")
				result, _ := b.Metadata.Object("taskd").String("branchResult")
				// A branch ends as every task does: completed when it
				// passed, pending (failed) when it failed.
				want := taskfile.StatusCompleted
				if result == "failed" {
					want = taskfile.StatusPending
				}
				if parent != "1" || b.Status != want {
					t.Errorf("branch %s: parent %q, status %s, want %s", id, parent, b.Status, want)
				}
				got[name] = result
			}
			if len(got) != len(tt.branches) || got["a"] != tt.branches["a"] || got["b"] != tt.branches["b"] {
				t.Errorf("branches %v, want %v", got, tt.branches)
			}
			if _, err := h.Do(flow.Tasks{}, "1", job.Resume); err != nil {
				t.Fatal(err)
			}
			if got := task.Of(h.Read("1")); got != tt.state {
				t.Errorf("after the join: %q, want %q\n%s", got, tt.state, h.Taskd("1"))
			}
			if ev := h.Events("1"); !slices.Contains(ev, "ForkStarted") || !slices.Contains(ev, "JoinCompleted") {
				t.Errorf("events %v", ev)
			}
		})
	}
}

// TestRecover: a step that ended while no daemon watched is applied from
// its result.json; without one the step runs again.
func TestRecover(t *testing.T) {
	for _, tt := range []struct {
		name   string
		result string
		trace  []string
	}{
		{"the build had passed", `{"success": true, "summary": "built", "exitCode": 0}`, []string{"build passed advance", "test passed advance"}},
		{"no result", "", []string{"build passed advance", "test passed advance"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			makefile(t, h, "echo built", "echo tested")
			h.Put("1", `{"id":"1","subject":"s","status":"in_progress","owner":"taskd","metadata":{"workflowType":"command-check","currentStep":"build","retryCount":0,`+
				`"taskd":{"cwd":"`+h.Cwd+`","state":"running","attempt":0,"startedAt":"2026-01-01T00:00:00Z"}}}`)
			run := h.List.RunDir("1", 1)
			if err := os.MkdirAll(run, 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.result != "" {
				if err := os.WriteFile(filepath.Join(run, "result.json"), []byte(tt.result), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := h.Do(flow.Tasks{}, "1", job.Recover); err != nil {
				t.Fatalf("Recover = %v\n%s", err, h.Log)
			}
			if tt.result == "" {
				// Interrupted: pending again, the step runs anew.
				if got := task.Of(h.Read("1")); got != task.None {
					t.Fatalf("recovered as %q, want pending\n%s", got, h.Taskd("1"))
				}
				if _, err := h.Do(flow.Tasks{}, "1", job.Run); err != nil {
					t.Fatal(err)
				}
			}
			if got := task.Of(h.Read("1")); got != task.Succeeded {
				t.Errorf("ended %q\n%s", got, h.Taskd("1"))
			}
			if got := trace(h, "1"); !slices.Equal(got[len(got)-2:], tt.trace) {
				t.Errorf("trace %q, want it to end %q", got, tt.trace)
			}
		})
	}
}

// TestIs: a task is a workflow's when its metadata names one.
func TestIs(t *testing.T) {
	for data, want := range map[string]bool{
		`{"id":"1","subject":"s","metadata":{"workflowType":"w"}}`: true,
		`{"id":"1","subject":"s","metadata":{"workflowType":""}}`:  false,
		`{"id":"1","subject":"s","metadata":{"taskd":{}}}`:         false,
		`{"id":"1","subject":"s"}`:                                 false,
	} {
		tf, err := taskfile.Parse([]byte(data), "1.json", "1")
		if err != nil {
			t.Fatal(err)
		}
		if got := flow.Is(tf); got != want {
			t.Errorf("Is(%s) = %v, want %v", data, got, want)
		}
	}
}

// catalog is the built-in workflows as a navigator.Catalog.
type catalog struct{ set *workflows.Set }

func (c catalog) Lookup(id string) (*navigator.Workflow, string, bool) { return c.set.Lookup(id) }

// TestNavigateFile: one navigation of a task file, written through under
// the file's lock as flow writes it; a missing file is flow's error, a
// file taskd refuses is left alone.
func TestNavigateFile(t *testing.T) {
	set, _ := workflows.Load()
	cat := catalog{set}
	dir := t.TempDir()
	path := filepath.Join(dir, "7.json")
	if err := os.WriteFile(path, []byte(`{"id":"7","subject":"s","metadata":{"keep":1,"workflowType":"quick-task"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	resp, wt, err := flow.NavigateFile(t.Context(), cat, path, navigator.Input{WorkflowType: "quick-task", Description: "do it"}, flow.NavigateFileOptions{RecordStart: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.CurrentStep != "work" || wt == nil {
		t.Fatalf("response at %q, write-through %v", resp.CurrentStep, wt)
	}
	tf, err := taskfile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	step, _ := tf.Metadata.String("currentStep")
	wf, _ := tf.Metadata.String("workflowType")
	keep, _ := tf.Metadata.Int("keep")
	if step != "work" || wf != "quick-task" || keep != 1 {
		t.Errorf("the file after: step %q, workflow %q, keep %d", step, wf, keep)
	}
	resp, _, err = flow.NavigateFile(t.Context(), cat, path, navigator.Input{Result: "passed"}, flow.NavigateFileOptions{})
	if err != nil || resp.CurrentStep != "verify" {
		t.Errorf("advance: %v, %v", resp, err)
	}

	if _, _, err := flow.NavigateFile(t.Context(), cat, filepath.Join(dir, "8.json"), navigator.Input{WorkflowType: "quick-task"}, flow.NavigateFileOptions{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a missing file: %v", err)
	}
	bad := filepath.Join(dir, "9.json")
	if err := os.WriteFile(bad, []byte(`{"id":"other"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var bfe *taskfile.BadFileError
	if _, _, err := flow.NavigateFile(t.Context(), cat, bad, navigator.Input{WorkflowType: "quick-task"}, flow.NavigateFileOptions{}); !errors.As(err, &bfe) {
		t.Errorf("a file taskd refuses: %v, want a *taskfile.BadFileError", err)
	}
	if data, _ := os.ReadFile(bad); string(data) != `{"id":"other"}` {
		t.Errorf("the refused file was changed: %s", data)
	}
	if _, _, err := flow.NavigateFile(t.Context(), cat, filepath.Join(dir, "notes.txt"), navigator.Input{}, flow.NavigateFileOptions{}); err == nil {
		t.Error("a file not named <id>.json was navigated")
	}
	home, _ := os.UserHomeDir()
	for in, want := range map[string]string{"~": home, "~/x/1.json": filepath.Join(home, "x/1.json"), "/a/1.json": "/a/1.json", "~x/1.json": "~x/1.json"} {
		if got := flow.TaskFilePath(in); got != want {
			t.Errorf("TaskFilePath(%s) = %s, want %s", in, got, want)
		}
	}
}
