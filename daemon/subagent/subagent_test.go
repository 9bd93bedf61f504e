package subagent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/job/jobtest"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/taskfile"
)

// parentTask is a running task of taskd's with metadata.taskd fields more
// (JSON members).
func parentTask(id, more string) string {
	td := `{"agent":"exec","prompt":"work","state":"running","attempt":1`
	if more != "" {
		td += "," + more
	}
	return `{"id":"` + id + `","subject":"parent","status":"in_progress","owner":"taskd","metadata":{"taskd":` + td + `}}}`
}

// TestDelegate_Scope: a subagent's permission mode and tools are its
// line's or its type's, never wider than its parent's; a wider one is a
// child created failed, with the reason, that never runs.
func TestDelegate_Scope(t *testing.T) {
	for _, tt := range []struct {
		name   string
		parent string // metadata.taskd fields of the parent
		req    prompt.Delegate
		mode   string
		tools  []string
		scope  string // a part of the refusal, "" when accepted
	}{
		{name: "the type's defaults", parent: `"permissionMode":"acceptEdits"`, req: prompt.Delegate{AgentType: "analyzer"},
			mode: "plan", tools: []string{"Read", "Grep", "Glob"}},
		{name: "the type narrowed to the parent", parent: `"permissionMode":"plan","tools":["Read","Edit"]`, req: prompt.Delegate{AgentType: "builder"},
			mode: "plan", tools: []string{"Read", "Edit"}},
		{name: "a narrower line", parent: `"permissionMode":"acceptEdits"`, req: prompt.Delegate{AgentType: "builder", PermissionMode: "plan", Tools: []string{"Read"}},
			mode: "plan", tools: []string{"Read"}},
		{name: "a wider mode", parent: `"permissionMode":"plan"`, req: prompt.Delegate{AgentType: "builder", PermissionMode: "acceptEdits"},
			scope: "--permission-mode acceptEdits is wider than the parent's plan"},
		{name: "a tool the parent lacks", parent: `"tools":["Read"]`, req: prompt.Delegate{AgentType: "tester", Tools: []string{"Bash"}},
			scope: "tool Bash is not among the parent's tools"},
		{name: "bypass without a person's leave", parent: `"permissionMode":"bypassPermissions"`, req: prompt.Delegate{AgentType: "builder", PermissionMode: "bypassPermissions"},
			scope: "bypassPermissions needs metadata.taskd.allowBypass"},
		{name: "bypass with it", parent: `"permissionMode":"bypassPermissions","allowBypass":true`, req: prompt.Delegate{AgentType: "builder", PermissionMode: "bypassPermissions"},
			mode: "bypassPermissions", tools: []string{"Read", "Edit", "Write", "Bash", "Glob", "Grep"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			h.Put("1", parentTask("1", tt.parent))
			req := tt.req
			req.Task = "look at it"
			child, err := subagent.Parent{Config: h.Env.Config, Dir: h.List.Dir, ID: "1"}.Delegate(t.Context(), &req, subagent.DelegateOptions{})
			if child == nil {
				t.Fatalf("Delegate = %v and no child", err)
			}
			m := h.Read(child.ID).Metadata.Object("taskd")
			name, _ := m.String("name")
			if name != req.AgentType+"-1" {
				t.Errorf("the child is named %q", name)
			}
			evs := h.Events(child.ID)
			if tt.scope != "" {
				msg, _ := m.String("error")
				if !errors.Is(err, subagent.ErrScope) || !strings.Contains(err.Error(), tt.scope) || !strings.Contains(msg, tt.scope) {
					t.Errorf("Delegate = %v (child's error %q), want a refusal %q", err, msg, tt.scope)
				}
				if task.Of(h.Read(child.ID)) != task.Failed || !slices.Equal(evs, []string{"SubagentError", "TaskFailed"}) {
					t.Errorf("a refused child is %q with events %v, want failed, SubagentError, TaskFailed", task.Of(h.Read(child.ID)), evs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mode, _ := m.String("permissionMode")
			tools := task.Strings(m, "tools")
			at, _ := m.String("agentType")
			bypass, _ := m.Bool("allowBypass")
			if mode != tt.mode || !slices.Equal(tools, tt.tools) || at != req.AgentType || bypass {
				t.Errorf("child scope: mode %s, tools %v, type %s, allowBypass %v; want %s, %v", mode, tools, at, bypass, tt.mode, tt.tools)
			}
			if task.Of(h.Read(child.ID)) != task.None || !slices.Equal(evs, []string{"SubagentSpawned", "TranscriptEvent"}) {
				t.Errorf("child %q with events %v, want pending after SubagentSpawned, TranscriptEvent", task.Of(h.Read(child.ID)), evs)
			}
		})
	}
}

// TestDelegate_Names: children of one type are numbered, and each is in
// its parent's parallel collection.
func TestDelegate_Names(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	h.Put("1", parentTask("1", ""))
	var names []string
	for range 3 {
		c, err := subagent.Parent{Config: h.Env.Config, Dir: h.List.Dir, ID: "1"}.Delegate(t.Context(), &prompt.Delegate{Task: "x", AgentType: "tester"}, subagent.DelegateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := h.Read(c.ID).Metadata.Object("taskd").String("name")
		names = append(names, n)
	}
	if !slices.Equal(names, []string{"tester-1", "tester-2", "tester-3"}) {
		t.Errorf("names %v", names)
	}
	par := task.Strings(h.Read("1").Metadata.Object("taskd").Object("children"), "parallel")
	if len(par) != 3 {
		t.Errorf("the parent's parallel children: %v", par)
	}
	if _, err := (subagent.Parent{Config: h.Env.Config, Dir: h.List.Dir, ID: "9"}).Delegate(t.Context(), &prompt.Delegate{Task: "x", AgentType: "tester"}, subagent.DelegateOptions{}); err == nil {
		t.Error("a child of a missing parent was made")
	}
	if _, err := (subagent.Parent{Config: h.Env.Config, Dir: h.List.Dir, ID: "1"}).Delegate(t.Context(), &prompt.Delegate{Task: "x", AgentType: "painter"}, subagent.DelegateOptions{}); err == nil {
		t.Error("a child of an unknown type was made")
	}
}

// endedChild writes child id of task 1 as ended in state with its answer
// in its run folder's result.json, its result delivered to its parent or
// not yet.
func endedChild(t *testing.T, h *jobtest.Harness, id, name string, state task.State, answer string, finished time.Time, delivered bool) {
	t.Helper()
	status := taskfile.StatusPending
	if state == task.Succeeded {
		status = taskfile.StatusCompleted
	}
	h.Put(id, `{"id":"`+id+`","subject":"c","status":"`+status+`","owner":"taskd","metadata":{"taskd":{"parent":"1","name":"`+name+`","agentType":"analyzer","state":"`+string(state)+
		`","attempt":1,"runDir":".taskd/runs/`+id+`/1","finishedAt":"`+task.Stamp(finished)+`","delivered":`+map[bool]string{true: "true", false: "false"}[delivered]+`}}}`)
	run := h.List.RunDir(id, 1)
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	res := `{"success": ` + map[bool]string{true: "true", false: "false"}[state == task.Succeeded] + `, "summary": "` + name + ` done", "answer": "` + answer + `"}`
	if err := os.WriteFile(filepath.Join(run, "result.json"), []byte(res), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConverge: children's persisted results converged into the parent's
// run folder; conflicts left for a person write nothing but a verdict and
// are ErrManualReview.
func TestConverge(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name     string
		strategy string
		answers  []string
		ok       bool
		manual   bool
		content  string // a part of the output
	}{
		{"vote", "vote", []string{"lru", "lru", "fifo"}, true, false, "lru"},
		{"consensus agreed", "consensus", []string{"42", "42", "42"}, true, false, "42"},
		{"consensus disputed", "consensus", []string{"42", "41", "42"}, false, true, "disagreement"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			h.Put("1", parentTask("1", `"children":{"parallel":["2","3","4"]}`))
			var names []string
			last := len(tt.answers) - 1
			for i, a := range tt.answers {
				name := "analyzer-" + string(rune('1'+i))
				names = append(names, name)
				// The last child's result is not delivered yet.
				endedChild(t, h, string(rune('2'+i)), name, task.Succeeded, a, now.Add(time.Duration(i)*time.Second), i != last)
			}
			runDir := h.List.RunDir("1", 1)
			if err := os.MkdirAll(runDir, 0o700); err != nil {
				t.Fatal(err)
			}
			req := &prompt.Converge{IDs: names, Strategy: tt.strategy}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			type converged struct {
				out *subagent.ConvergeOutput
				err error
			}
			done := make(chan converged, 1)
			go func() {
				out, err := subagent.Parent{Config: h.Env.Config, Dir: h.List.Dir, ID: "1"}.Converge(ctx, runDir, req, subagent.ConvergeOptions{})
				done <- converged{out, err}
			}()
			// Converge waits for the last result; once it is delivered (a
			// write to the child's file), Converge wakes.
			waitfor.Cond(t, "the convergence to be recorded", 30*time.Second, func() bool { return slices.Contains(h.Events("1"), "ConvergenceInitiated") })
			select {
			case c := <-done:
				t.Fatalf("Converge returned before the last result was delivered: %+v, %v", c.out, c.err)
			default:
			}
			lastID := string(rune('2' + last))
			if _, err := h.List.Dir.Update(ctx, lastID, func(t *taskfile.Task) error {
				task.Meta(t).Set("delivered", true)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			c := <-done
			out, err := c.out, c.err
			if tt.manual {
				if !errors.Is(err, subagent.ErrManualReview) || out == nil || out.Unresolved == 0 || !strings.Contains(string(out.Content), tt.content) {
					t.Fatalf("Converge = %+v, %v; want a manual review of a %s", out, err, tt.content)
				}
				if !slices.Contains(h.Events("1"), "ManualReviewRequired") {
					t.Errorf("events %v, want ManualReviewRequired", h.Events("1"))
				}
				return
			}
			if err != nil {
				t.Fatalf("Converge = %v", err)
			}
			data, _ := os.ReadFile(out.Path)
			if out.Success != tt.ok || filepath.Dir(out.Path) != runDir || !strings.Contains(string(data), tt.content) {
				t.Errorf("Converge = %+v; the output %s holds\n%s", out, out.Path, data)
			}
			if ev := h.Events("1"); !slices.Contains(ev, "ConvergenceInitiated") || !slices.Contains(ev, "ConvergenceComplete") {
				t.Errorf("events %v", ev)
			}
		})
	}
}

// TestMetrics: the metrics of the events the subagent commands logged:
// children spawned, one refused, the ends Finish recorded, a convergence.
func TestMetrics(t *testing.T) {
	fc := &config.FileConfig{Agents: map[string]string{"analyzer": "exec", "tester": "exec"}}
	h := jobtest.New(t, jobtest.Options{Config: fc})
	h.Put("1", parentTask("1", `"permissionMode":"plan"`))
	var ids []string
	for _, req := range []prompt.Delegate{{AgentType: "analyzer"}, {AgentType: "analyzer"}, {AgentType: "tester"}, {AgentType: "builder", PermissionMode: "acceptEdits"}} {
		req.Task = "echo hi"
		c, err := subagent.Parent{Config: h.Env.Config, Dir: h.List.Dir, ID: "1"}.Delegate(t.Context(), &req, subagent.DelegateOptions{})
		if err != nil && !errors.Is(err, subagent.ErrScope) {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	// The first two end, one succeeding and one failing, as an attempt of
	// theirs ends and its result is delivered; the third still runs.
	for i, ok := range []bool{true, false} {
		j := h.Job(ids[i], job.Run)
		c, err := j.Claim(t.Context(), func(t *taskfile.Task, sp *task.Spec) error { sp.Attempt++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		res := agent.Result{Success: ok, Summary: "done", ExitCode: map[bool]int{true: 0, false: 1}[ok]}
		if !ok {
			res.Error = "exit status 1"
		}
		ft, err := subagent.Finish(t.Context(), j, c.Spec, res, agent.Finished)
		if err != nil {
			t.Fatal(err)
		}
		subagent.Ended(t.Context(), j, ft) // as the delivery of its result does
	}
	evs, err := eventlog.Read(h.List.Path())
	if err != nil {
		t.Fatal(err)
	}
	m := subagent.ComputeMetrics(evs)
	for _, tt := range []struct {
		name      string
		got, want any
	}{
		{"spawned", m.Spawned, 3},
		{"refused", m.Refused, 1},
		{"ended", m.Ended, 2},
		{"running", m.Running, 1},
		{"succeeded", m.Succeeded, 1},
		{"failed", m.Failed, 1},
		{"success rate", m.SuccessRate, 0.5},
		{"analyzers spawned", m.ByType["analyzer"].Spawned, 2},
		{"analyzers ended", m.ByType["analyzer"].Ended, 2},
		{"testers running", m.ByType["tester"].Running, 1},
		{"the sums", m.Spawned, m.Ended + m.Running},
	} {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if empty := subagent.ComputeMetrics(nil); empty.Spawned != 0 || empty.SuccessRate != 0 {
		t.Errorf("metrics of no events: %+v", empty)
	}
}

// TestOwns: the subagent handler takes a task suspended by a subagent
// line or asked about subagents, and nothing else.
func TestOwns(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	for _, tt := range []struct {
		td   string
		kind job.Kind
		want bool
	}{
		{`{"prompt":"x"}`, job.Run, false},
		{`{"prompt":"x","state":"waiting","wait":{"kind":"handoff","line":1,"children":["2"]}}`, job.Resume, true},
		{`{"prompt":"x","state":"needs_human","hitl":{"kind":"converge","reason":"r"}}`, job.Answer, true},
		{`{"prompt":"x","state":"needs_human","hitl":{"kind":"workflow","reason":"r"}}`, job.Answer, false},
	} {
		h.Put("1", `{"id":"1","subject":"s","status":"pending","owner":"taskd","metadata":{"taskd":`+tt.td+`}}`)
		if got := subagent.Owns(tt.kind, h.Read("1")); got != tt.want {
			t.Errorf("Owns(%v, %s) = %v, want %v", tt.kind, tt.td, got, tt.want)
		}
	}
}

// claim claims task id for a new pass, as a plain task's claim does.
func claim(t *testing.T, h *jobtest.Harness, id string) (*job.Job, *taskfile.Task, task.Spec) {
	t.Helper()
	j := h.Job(id, job.Run)
	c, err := j.Claim(t.Context(), func(t *taskfile.Task, sp *task.Spec) error { sp.Attempt++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return j, c.Task, c.Spec
}

// endChild records child id as ended in state, its result delivered.
func endChild(t *testing.T, h *jobtest.Harness, id string, state task.State, summary string) {
	t.Helper()
	if _, err := h.List.Dir.Update(t.Context(), id, func(tf *taskfile.Task) error {
		if _, err := task.Move(tf, task.Claim); err != nil {
			return err
		}
		ev := map[task.State]task.Event{task.Succeeded: task.Succeed, task.Failed: task.Fail}[state]
		if _, err := task.Move(tf, ev); err != nil {
			return err
		}
		m := task.Meta(tf)
		res := taskfile.NewObject()
		res.Set("summary", summary)
		res.Set("success", state == task.Succeeded)
		m.Set("result", res)
		m.Set("delivered", true)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestHandoffLine: a /handoff --transfer-control line suspends its task
// until the child has ended and its result is delivered; the released
// task, run again, is given the child's result; a failed child with
// --on-failure abort fails the line, with escalate asks a person.
func TestHandoffLine(t *testing.T) {
	for _, tt := range []struct {
		name      string
		onFailure string
		state     task.State
		want      string // "result", "abort" or "escalate"
	}{
		{"the child succeeds", "escalate", task.Succeeded, "result"},
		{"the child fails, abort", "abort", task.Failed, "abort"},
		{"the child fails, escalate", "escalate", task.Failed, "escalate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			h.Put("1", strings.Replace(parentTask("1", ""), `"state":"running","attempt":1`, `"cwd":"`+h.Cwd+`"`, 1))
			child, err := subagent.Parent{Config: h.Env.Config, Dir: h.List.Dir, ID: "1"}.Delegate(t.Context(), &prompt.Delegate{Task: "echo hi", AgentType: "analyzer"}, subagent.DelegateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			line := &prompt.Handoff{ID: "analyzer-1", TransferControl: true, Timeout: time.Hour, OnFailure: tt.onFailure}

			j, tf, sp := claim(t, h, "1")
			var results []string
			err = subagent.Leading{Job: j, Task: tf, Spec: sp, Results: &results}.HandoffLine(t.Context(), 2, line)
			waiting, ok := subagent.Suspended(err)
			if !ok || task.Of(waiting) != task.Waiting {
				t.Fatalf("HandoffLine with the child running = %v, want the task suspended", err)
			}
			if w := subagent.WaitOf(h.Read("1")); w == nil || !slices.Equal(w.Children, []string{child.ID}) {
				t.Fatalf("the wait: %+v\n%s", w, h.Taskd("1"))
			}
			if !subagent.Owns(job.Resume, h.Read("1")) {
				t.Error("the handler does not own the release of a suspended task")
			}

			endChild(t, h, child.ID, tt.state, "the child's summary")
			if _, err := h.Do(subagent.Tasks{}, "1", job.Resume); err != nil {
				t.Fatal(err)
			}
			if got := task.Of(h.Read("1")); got != task.None || subagent.WaitOf(h.Read("1")) != nil {
				t.Fatalf("after the release: %q\n%s", got, h.Taskd("1"))
			}

			j, tf, sp = claim(t, h, "1")
			err = subagent.Leading{Job: j, Task: tf, Spec: sp, Results: &results}.HandoffLine(t.Context(), 2, line)
			switch tt.want {
			case "result":
				if err != nil || len(results) != 1 || !strings.Contains(results[0], "the child's summary") || !strings.Contains(results[0], "succeeded") {
					t.Errorf("HandoffLine = %v, results %q", err, results)
				}
				done := task.Strings(h.Read("1").Metadata.Object("taskd").Object("children"), "done")
				if !slices.Equal(done, []string{child.ID}) {
					t.Errorf("the parent's done children: %v", done)
				}
			case "abort":
				if err == nil || !strings.Contains(err.Error(), "--on-failure abort") {
					t.Errorf("HandoffLine = %v, want the abort", err)
				}
			case "escalate":
				asked, ok := subagent.Suspended(err)
				if !ok || task.Of(asked) != task.NeedsHuman {
					t.Fatalf("HandoffLine = %v, want the task to ask a person", err)
				}
				opts := task.Strings(asked.Metadata.Object("taskd").Object("hitl"), "options")
				if !slices.Contains(opts, "retry") || !slices.Contains(opts, "abort") {
					t.Errorf("a person is offered %v", opts)
				}
			}
			if ev := h.Events("1"); !slices.Contains(ev, "TaskWaiting") || !slices.Contains(ev, "TaskResumed") || !slices.Contains(ev, "HandoffInitiated") {
				t.Errorf("events %v", ev)
			}
		})
	}
}
