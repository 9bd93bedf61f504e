package plain_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/job/jobtest"
	"github.com/taskd/taskd/daemon/plain"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// execTask is a task file of taskd's whose exec agent runs script in cwd,
// with more metadata.taskd fields (JSON members, without braces).
func execTask(id, cwd, script, more string) string {
	td := map[string]any{"agent": "exec", "prompt": script, "cwd": cwd}
	data, _ := json.Marshal(td)
	fields := string(data)
	if more != "" {
		fields = strings.TrimSuffix(fields, "}") + "," + more + "}"
	}
	return `{"id":"` + id + `","subject":"s","status":"pending","owner":"taskd","metadata":{"taskd":` + fields + `}}`
}

// field returns metadata.taskd's key of task id, decoded.
func field(h *jobtest.Harness, id, key string) any {
	v, _ := h.Read(id).Metadata.Object("taskd").Get(key)
	if o, ok := v.(*taskfile.Object); ok {
		var m map[string]any
		json.Unmarshal(taskfile.MarshalIndent(o), &m)
		return m
	}
	return v
}

// TestRun: one attempt of a plain task, from the claim to the write that
// ends it, with a real agent: the state and status it ends in, its result,
// and the events it logged.
func TestRun(t *testing.T) {
	for _, tt := range []struct {
		name, script, more string
		state              task.State
		status             string
		events             []string
		summary, err       string // parts of the result's summary and of metadata.taskd.error
	}{
		{name: "succeeds", script: "echo hello", state: task.Succeeded, status: taskfile.StatusCompleted,
			events: []string{"TaskStarted", "TaskSucceeded"}, summary: "hello"},
		{name: "fails for good", script: "echo broken; exit 3", state: task.Failed, status: taskfile.StatusPending,
			events: []string{"TaskStarted", "TaskFailed"}, summary: "broken", err: "exit status 3"},
		{name: "fails with retries left", script: "exit 1", more: `"retries":2`, state: task.Retrying, status: taskfile.StatusPending,
			events: []string{"TaskStarted", "TaskFailed", "TaskRetrying"}, err: "exit status 1"},
		{name: "its result says it failed", script: `echo '{"success": false, "summary": "could not"}'`, state: task.Failed, status: taskfile.StatusPending,
			events: []string{"TaskStarted", "TaskFailed"}, summary: "could not", err: "the agent reported failure: could not"},
		{name: "times out", script: "sleep 30", more: `"timeout":"1s"`, state: task.TimedOut, status: taskfile.StatusPending,
			events: []string{"TaskStarted", "TaskTimedOut"}, err: "timed out"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			h.Put("1", execTask("1", h.Cwd, tt.script, tt.more))
			got, err := h.Do(plain.Tasks{}, "1", job.Run)
			if err != nil {
				t.Fatalf("Run = %v\n%s", err, h.Log)
			}
			on := h.Read("1")
			if task.Of(got) != tt.state || task.Of(on) != tt.state || on.Status != tt.status {
				t.Errorf("returned %q, on disk %q (%s); want %q (%s)\n%s", task.Of(got), task.Of(on), on.Status, tt.state, tt.status, h.Taskd("1"))
			}
			if ev := h.Events("1"); !slices.Equal(ev, tt.events) {
				t.Errorf("events %v, want %v", ev, tt.events)
			}
			sp, err := task.ReadSpec(on)
			if err != nil || sp.Attempt != 1 {
				t.Errorf("attempt %d (%v), want 1", sp.Attempt, err)
			}
			res, _ := field(h, "1", "result").(map[string]any)
			if s, _ := res["summary"].(string); !strings.Contains(s, tt.summary) {
				t.Errorf("summary %q, want %q", s, tt.summary)
			}
			if e, _ := field(h, "1", "error").(string); !strings.Contains(e, tt.err) || (tt.err == "") != (e == "") {
				t.Errorf("error %q, want %q", e, tt.err)
			}
			if rf := h.RunFile("1", 1, "result.json"); rf == "" {
				t.Error("no result.json in the run folder")
			}
		})
	}
}

// TestRun_RetryThenFail: a task with one retry runs twice, then fails for
// good, its failures counted.
func TestRun_RetryThenFail(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	h.Put("1", execTask("1", h.Cwd, `echo "run $TASKD_ATTEMPT"; exit 1`, `"retries":1`))
	for i, want := range []task.State{task.Retrying, task.Failed} {
		if i > 0 {
			// The retry is due: the loop would start it now.
			if _, err := h.List.Dir.Update(t.Context(), "1", func(t *taskfile.Task) error {
				task.Meta(t).Set("retryAt", "2000-01-01T00:00:00Z")
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := h.Do(plain.Tasks{}, "1", job.Run); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if got := task.Of(h.Read("1")); got != want {
			t.Fatalf("after run %d: %q, want %q\n%s", i+1, got, want, h.Taskd("1"))
		}
	}
	if n, _ := field(h, "1", "failures").(json.Number); n != "2" {
		t.Errorf("failures = %v, want 2", field(h, "1", "failures"))
	}
	if got, want := h.Events("1"), []string{"TaskStarted", "TaskFailed", "TaskRetrying", "TaskStarted", "TaskFailed"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if h.RunFile("1", 2, "result.json") == "" {
		t.Error("the second attempt has no run folder of its own")
	}
}

// TestRun_NotRunnable: a task that is not pending (running, ended, a
// workflow) is not claimed, and its file is left as it was.
func TestRun_NotRunnable(t *testing.T) {
	for name, more := range map[string]string{
		"running":  `"state":"running","attempt":1`,
		"ended":    `"state":"succeeded"`,
		"cancel":   `"cancel":true`,
		"waiting":  `"state":"waiting"`,
		"workflow": ``,
	} {
		t.Run(name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			data := execTask("1", h.Cwd, "echo no", more)
			if name == "workflow" {
				data = strings.Replace(data, `"metadata":{`, `"metadata":{"workflowType":"quick-task",`, 1)
			}
			h.Put("1", data)
			before, _ := os.ReadFile(h.List.Dir.File("1"))
			if _, err := h.Do(plain.Tasks{}, "1", job.Run); err != job.ErrNotRunnable {
				t.Errorf("Run = %v, want ErrNotRunnable", err)
			}
			if after, _ := os.ReadFile(h.List.Dir.File("1")); string(after) != string(before) {
				t.Errorf("the file changed:\n%s", after)
			}
		})
	}
}

// TestRun_Children: a task's leading /push lines make its children, /run
// starts them and the task waits for them; once they have ended, the
// resumed task is given their results and ends.
func TestRun_Children(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	h.Put("1", execTask("1", h.Cwd, "/push name=kid \"echo child says hi\"\n/push name=queued \"echo later\"\n/run 1\n\ncat \"$TASKD_PROMPT_FILE\" 2>/dev/null; echo parent", ""))
	if _, err := h.Do(plain.Tasks{}, "1", job.Run); err != nil {
		t.Fatal(err)
	}
	if got := task.Of(h.Read("1")); got != task.Waiting {
		t.Fatalf("the parent is %q, want waiting\n%s", got, h.Taskd("1"))
	}
	kids, _ := field(h, "1", "children").(map[string]any)
	if got := kids["parallel"]; len(got.([]any)) != 1 || got.([]any)[0] != "2" {
		t.Errorf("children %v, want kid (2) started", kids)
	}
	if q := kids["queued"]; len(q.([]any)) != 1 || q.([]any)[0] != "3" {
		t.Errorf("children %v, want queued (3) queued", kids)
	}
	for id, want := range map[string]string{"2": "kid", "3": "queued"} {
		if name, _ := field(h, id, "name").(string); name != want || field(h, id, "parent") != "1" {
			t.Errorf("task %s: name %q, parent %v", id, name, field(h, id, "parent"))
		}
	}
	if got := task.Of(h.Read("3")); got != task.Queued {
		t.Errorf("the queued child is %q", got)
	}
	if _, err := h.Do(plain.Tasks{}, "2", job.Run); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Do(plain.Tasks{}, "1", job.Resume); err != nil {
		t.Fatal(err)
	}
	p := h.Read("1")
	if task.Of(p) != task.Succeeded || p.Status != taskfile.StatusCompleted {
		t.Fatalf("the resumed parent is %q\n%s", task.Of(p), h.Taskd("1"))
	}
	resumed := h.RunFile("1", 2, "prompt.md")
	for _, want := range []string{"### kid (task 2): succeeded", "Summary: child says hi"} {
		if !strings.Contains(resumed, want) {
			t.Errorf("the resumed prompt lacks %q:\n%s", want, resumed)
		}
	}
	if got, want := h.Events("1"), []string{"TaskStarted", "TaskWaiting", "TaskResumed", "TaskSucceeded"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// TestRun_Read: a leading /read gives the agent the file (rendered into
// its run folder's prompt and transcript); a file missing when the task
// starts is an error result, and the task still runs.
func TestRun_Read(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	if err := os.WriteFile(filepath.Join(h.Cwd, "notes.md"), []byte("the notes' text"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.Put("1", execTask("1", h.Cwd, "/read notes.md\n/read gone.md\n\ncat \"$TASKD_TRANSCRIPT\"", ""))
	if err := os.WriteFile(filepath.Join(h.Cwd, "gone.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Accepted while gone.md was there; it goes before the task starts.
	if err := plain.CheckPrompt(h.Job("1", job.Run).Scope, spec(t, h.Read("1"))); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(h.Cwd, "gone.md"))
	if _, err := h.Do(plain.Tasks{}, "1", job.Run); err != nil {
		t.Fatal(err)
	}
	if got := task.Of(h.Read("1")); got != task.Succeeded {
		t.Fatalf("state %q\n%s", got, h.Taskd("1"))
	}
	prompt := h.RunFile("1", 1, "prompt.md")
	transcript := h.RunFile("1", 1, "transcript.json")
	for what, text := range map[string]string{"prompt.md": prompt, "transcript.json": transcript} {
		if !strings.Contains(text, "the notes' text") || !strings.Contains(text, "gone.md") {
			t.Errorf("%s lacks the file or the missing one's error:\n%s", what, text)
		}
	}
}

// TestCheckPrompt: what is refused when a task is accepted, with the
// line or field named.
func TestCheckPrompt(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.Cwd, "in.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, script, more, want string // want: "" accepted, else a part of the error
	}{
		{name: "plain content", script: "echo hi"},
		{name: "a read inside the cwd", script: "/read in.md\n\ngo"},
		{name: "a read outside every root", script: "/read " + filepath.Join(outside, "secret.md") + "\n\ngo", want: "prompt line 1"},
		{name: "an unknown command", script: "/frobnicate now\n\ngo", want: "frobnicate"},
		{name: "an agent command as a line", script: "/check\n\ngo", want: "check"},
		{name: "a loop judged by nobody", script: "go", more: `"loop":{"max":2,"until":"done"}`, want: "judge"},
		{name: "a loop checked by a command", script: "go", more: `"loop":{"max":2,"untilCommand":"true"}`},
		{name: "a bad return item", script: "go", more: `"return":["/frobnicate x"]`, want: "return item 1"},
		{name: "an unknown worker", script: "go", more: `"worker":"nobody-knows"`, want: "metadata.taskd.worker"},
		{name: "a bad $RESULT", script: "use $RESULT[", want: "prompt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.Put("1", execTask("1", h.Cwd, tt.script, tt.more))
			tf := h.Read("1")
			err := plain.CheckPrompt(h.Job("1", job.Run).Scope, spec(t, tf))
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("CheckPrompt = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestCheckPrompt_Spec: the check reads what a task asks for from its
// Spec alone, with no task file: the description is the prompt unless
// metadata.taskd.prompt is set, a block is checked against the fields
// the task has (not those it inherited), a loop's judge falls back to the
// owner's profile.
func TestCheckPrompt_Spec(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	loop := map[string]any{"max": json.Number("2"), "until": "done"}
	for _, tt := range []struct {
		name string
		sp   task.Spec
		want string // "" accepted, else a part of the error
	}{
		{name: "the description as the prompt", sp: task.Spec{Description: "echo hi"}},
		{name: "a bad description", sp: task.Spec{Description: "/frobnicate now\n\ngo"}, want: "frobnicate"},
		{name: "the prompt over the description", sp: task.Spec{Prompt: "go", HasPrompt: true, Description: "/frobnicate now\n\ngo"}},
		{name: "a block that disagrees", sp: task.Spec{Prompt: "/subtask{model:opus} go", HasPrompt: true, Block: map[string]any{"model": "haiku"}}, want: "disagree"},
		{name: "a block that agrees", sp: task.Spec{Prompt: "/subtask{model:opus} go", HasPrompt: true, Block: map[string]any{"model": "opus"}}},
		{name: "a block over an inherited field", sp: task.Spec{Prompt: "/subtask{model:opus} go", HasPrompt: true, Block: map[string]any{"model": "haiku"}, Inherited: []string{"model"}}},
		{name: "a loop judged by the owner's exec profile", sp: task.Spec{Prompt: "go", HasPrompt: true, OwnerProfile: "exec", Block: map[string]any{"loop": loop}}, want: "judge"},
		{name: "a loop judged by the owner's model", sp: task.Spec{Prompt: "go", HasPrompt: true, OwnerProfile: "claude", Block: map[string]any{"loop": loop}}},
		{name: "a loop's agent over the owner's", sp: task.Spec{Prompt: "go", HasPrompt: true, OwnerProfile: "claude", Block: map[string]any{"loop": loop, "agent": "exec"}}, want: "judge"},
		{name: "an unknown worker", sp: task.Spec{Prompt: "go", HasPrompt: true, Worker: "nobody-knows"}, want: "metadata.taskd.worker"},
		{name: "two parallel items with one as", sp: task.Spec{Prompt: "go", HasPrompt: true, Block: map[string]any{"parallel": []any{"/subtask{as:x} a", "/subtask{as:x} b"}}}, want: "both have as"},
		{name: "a bad parallel item", sp: task.Spec{Prompt: "go", HasPrompt: true, Block: map[string]any{"parallel": []any{"/frobnicate x"}}}, want: "parallel item 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := plain.CheckPrompt(h.Job("1", job.Run).Scope, tt.sp)
			if got := errText(err); tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("CheckPrompt = %q, want %q", got, tt.want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRecover: an attempt a dead daemon left running is recorded from its
// run folder's result.json, or, with none, interrupted and run again.
func TestRecover(t *testing.T) {
	for _, tt := range []struct {
		name   string
		result string // result.json, "" for none
		state  task.State
	}{
		{"ended while the daemon was down", `{"success": true, "summary": "done meanwhile", "exitCode": 0}`, task.Succeeded},
		{"failed while the daemon was down", `{"success": false, "summary": "broke", "exitCode": 2, "error": "exit status 2"}`, task.Failed},
		{"no result", "", task.None},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			data := execTask("1", h.Cwd, "echo x", `"state":"running","attempt":1,"runDir":".taskd/runs/1/1","startedAt":"2026-01-01T00:00:00Z"`)
			h.Put("1", strings.Replace(data, `"status":"pending"`, `"status":"in_progress"`, 1))
			run := h.List.RunDir("1", 1)
			if err := os.MkdirAll(run, 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.result != "" {
				if err := os.WriteFile(filepath.Join(run, "result.json"), []byte(tt.result), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := h.Do(plain.Tasks{}, "1", job.Recover); err != nil {
				t.Fatalf("Recover = %v\n%s", err, h.Log)
			}
			if got := task.Of(h.Read("1")); got != tt.state {
				t.Errorf("recovered as %q, want %q\n%s", got, tt.state, h.Taskd("1"))
			}
			if tt.result == "" {
				if n, _ := field(h, "1", "interrupted").(json.Number); n != "1" {
					t.Errorf("interrupted = %v, want 1", field(h, "1", "interrupted"))
				}
			}
		})
	}
}

// TestDo_Kinds: the handler takes the kinds of job a plain task has, and
// refuses the others.
func TestDo_Kinds(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	h.Put("1", execTask("1", h.Cwd, "echo x", ""))
	for _, k := range []job.Kind{job.Cancel, job.Deliver, job.Settle} {
		if _, err := h.Do(plain.Tasks{}, "1", k); err == nil || !strings.Contains(err.Error(), "of a plain task") {
			t.Errorf("%v: %v, want a refusal", k, err)
		}
	}
	if _, err := h.Do(plain.Tasks{}, "1", job.Recover); err != job.ErrNotRunnable {
		t.Errorf("Recover of a pending task = %v, want ErrNotRunnable", err)
	}
}

func spec(t *testing.T, tf *taskfile.Task) task.Spec {
	t.Helper()
	sp, err := task.ReadSpec(tf)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestRun_Loop: a loop runs its task again until its command says it is
// done, each iteration one attempt, and ends succeeded.
func TestRun_Loop(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	script := `n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; if [ $n -ge 2 ]; then touch done; fi; echo "iteration $n"`
	h.Put("1", execTask("1", h.Cwd, script, `"loop":{"max":5,"untilCommand":"test -f done"}`))
	var states []task.State
	for range 3 {
		if _, err := h.Do(plain.Tasks{}, "1", job.Run); err != nil {
			if err == job.ErrNotRunnable {
				break
			}
			t.Fatal(err)
		}
		states = append(states, task.Of(h.Read("1")))
	}
	if want := []task.State{task.None, task.Succeeded}; !slices.Equal(states, want) {
		t.Fatalf("states after each run %v, want %v\n%s", states, want, h.Taskd("1"))
	}
	for key, want := range map[string]any{"loopIteration": json.Number("2"), "loopExit": "satisfied", "attempt": json.Number("2")} {
		if got := field(h, "1", key); got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	if got, want := h.Events("1"), []string{"TaskStarted", "LoopIteration", "TaskStarted", "LoopIteration", "LoopExited", "TaskSucceeded"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if data, _ := os.ReadFile(filepath.Join(h.Cwd, "count")); strings.TrimSpace(string(data)) != "2" {
		t.Errorf("the agent ran %s times, want 2", data)
	}
}
