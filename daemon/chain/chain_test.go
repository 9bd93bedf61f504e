package chain_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/chain"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/job/jobtest"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/internal/jsonorder"
	"github.com/taskd/taskd/taskfile"
)

// taskWith is a task file of taskd's with metadata.taskd td (a JSON
// object).
func taskWith(id, td string) string {
	return `{"id":"` + id + `","subject":"s","status":"pending","owner":"taskd","metadata":{"taskd":` + td + `}}`
}

func spec(t *testing.T, tf *taskfile.Task) task.Spec {
	t.Helper()
	sp, err := task.ReadSpec(tf)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func str(v any) string { s, _ := json.Marshal(v); return string(s) }

// TestOverrides: a task's chain settings, read from its fields.
func TestOverrides(t *testing.T) {
	for _, tt := range []struct {
		td   string
		want prompt.Overrides
		err  string
	}{
		{td: `{}`, want: prompt.Overrides{}},
		{td: `{"model":"opus","agent":"exec","as":"facts","auto":true}`, want: prompt.Overrides{Model: "opus", Agent: "exec", As: "facts", Auto: true}},
		{td: `{"loop":{"max":3,"untilCommand":"make test"}}`, want: prompt.Overrides{Loop: &prompt.Loop{Max: 3, UntilCommand: "make test"}}},
		{td: `{"loop":{"until":"tests pass"}}`, want: prompt.Overrides{Loop: &prompt.Loop{Max: prompt.DefaultLoopMax, Until: "tests pass"}}},
		{td: `{"return":["a","b"],"parallel":["/x 1"]}`, want: prompt.Overrides{Return: []string{"a", "b"}, Parallel: []string{"/x 1"}}},
		{td: `{"loop":"often"}`, err: "loop"},
		{td: `{"return":"a"}`, err: "return"},
	} {
		h := jobtest.New(t, jobtest.Options{})
		h.Put("1", taskWith("1", tt.td))
		got, err := chain.Overrides(h.Read("1"))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Overrides(%s) = %v, want an error about %s", tt.td, err, tt.err)
			}
			continue
		}
		if err != nil || str(got) != str(tt.want) {
			t.Errorf("Overrides(%s) = %s, %v; want %s", tt.td, str(got), err, str(tt.want))
		}
	}
}

// TestPlanOf: a prompt's /subtask block or command file, its content, and
// the block compiled into the task's fields when it is claimed.
func TestPlanOf(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	cmdFile := filepath.Join(area.CommandsDir(h.List.Path()), "review.md")
	if err := os.MkdirAll(filepath.Dir(cmdFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cmdFile, []byte("---\nmodel: haiku\nreturn: echo checked\n---\nReview $ARGUMENTS carefully.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, td  string
		hasBlock  bool
		content   string
		compiled  string // metadata.taskd after CompileBlock, "" when unchanged
		blockErr  string // CheckBlock's error
		planError string
	}{
		{name: "no commands", td: `{"prompt":"just do it"}`, content: "just do it"},
		{name: "a subtask block", td: `{"prompt":"/subtask{loop:3 && until:tests pass} fix the tests"}`, hasBlock: true, content: "fix the tests",
			compiled: `{"prompt":"/subtask{loop:3 && until:tests pass} fix the tests","loop":{"max":3,"until":"tests pass"}}`},
		{name: "a block agreeing with the fields", td: `{"prompt":"/subtask{model:opus} go","model":"opus"}`, hasBlock: true, content: "go",
			compiled: `{"prompt":"/subtask{model:opus} go","model":"opus"}`},
		{name: "a block disagreeing with the fields", td: `{"prompt":"/subtask{model:opus} go","model":"haiku"}`, hasBlock: true, content: "go",
			blockErr: "metadata.taskd.model and the prompt's block disagree"},
		{name: "a block overriding an inherited field", td: `{"prompt":"/subtask{model:opus} go","model":"haiku","inherited":["model"]}`, hasBlock: true, content: "go",
			compiled: `{"prompt":"/subtask{model:opus} go","model":"opus"}`},
		{name: "a block naming an unknown agent", td: `{"prompt":"/subtask{agent:nobody} go"}`, hasBlock: true, content: "go", blockErr: "prompt block agent"},
		{name: "a command file", td: `{"prompt":"/review src/auth"}`, hasBlock: true, content: "Review src/auth carefully.",
			compiled: `{"prompt":"/review src/auth","model":"haiku","return":["echo checked"]}`},
		{name: "a command file and content", td: `{"prompt":"/review src\n\nAlso the tests."}`, hasBlock: true, content: "Review src carefully.\n\nAlso the tests."},
		{name: "no such command file", td: `{"prompt":"/nothing here"}`, planError: "unknown command /nothing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.Put("1", taskWith("1", tt.td))
			tf := h.Read("1")
			p, err := chain.PlanOf(h.Job("1", job.Run).Scope, spec(t, tf))
			if tt.planError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.planError) {
					t.Fatalf("PlanOf = %v, want %q", err, tt.planError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.HasBlock != tt.hasBlock || p.Content != tt.content {
				t.Errorf("plan: block %v, content %q; want %v, %q", p.HasBlock, p.Content, tt.hasBlock, tt.content)
			}
			err = chain.CheckBlock(h.Env.Config, spec(t, tf), p)
			if tt.blockErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.blockErr) {
					t.Errorf("CheckBlock = %v, want %q", err, tt.blockErr)
				}
				return
			}
			if err != nil {
				t.Errorf("CheckBlock = %v", err)
			}
			chain.CompileBlock(tf, p)
			if tt.compiled != "" {
				if got := compact(tf.Metadata.Object("taskd")); got != tt.compiled {
					t.Errorf("compiled:\n got  %s\n want %s", got, tt.compiled)
				}
			}
		})
	}
}

// TestCreateReturns: a task's return items become a chain of siblings,
// each blocked by the one before and told which task it follows, with the
// task's inherited fields; an item with returns of its own is followed by
// them first; a second call adds nothing.
func TestCreateReturns(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	h.Put("1", taskWith("1", `{"agent":"exec","cwd":"`+h.Cwd+`","model":"m","prompt":"main","return":["echo two","/subtask{return:echo inner} echo three","echo four"]}`))
	tf := h.Read("1")
	ov, err := chain.Overrides(tf)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := chain.CreateReturns(t.Context(), h.Job("1", job.Run), tf, ov); err != nil {
			t.Fatal(err)
		}
	}
	ids, _ := h.List.Dir.List()
	if len(ids) != 5 {
		t.Fatalf("tasks %v, want the task and four returns", ids)
	}
	type ret struct{ name, prompt, previous, blockedBy, expanded string }
	var got []ret
	for _, id := range ids[1:] {
		c := h.Read(id)
		m := c.Metadata.Object("taskd")
		name, _ := m.String("name")
		p, _ := m.String("prompt")
		prev, _ := m.String("previous")
		exp, _ := m.Bool("returnsExpanded")
		if of, _ := m.String("returnOf"); of != "1" {
			t.Errorf("task %s: returnOf %q", id, of)
		}
		if model, _ := m.String("model"); model != "m" {
			t.Errorf("task %s: model %q, want the task's", id, model)
		}
		got = append(got, ret{name, p, idName(h, prev), idName(h, strings.Join(c.BlockedBy, ",")), map[bool]string{true: "expanded"}[exp]})
	}
	want := []ret{
		{"1-r1", "echo two", "1", "1", ""},
		{"1-r2", "/subtask{return:echo inner} echo three", "1-r1", "1-r1", "expanded"},
		{"1-r3", "echo inner", "1-r2", "1-r2", ""},
		{"1-r4", "echo four", "1-r3", "1-r3", ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("returns\n got  %v\n want %v", got, want)
	}
}

// idName returns the name of task id ("1" for the top task).
func idName(h *jobtest.Harness, id string) string {
	if id == "1" || id == "" {
		return id
	}
	n, _ := h.Read(id).Metadata.Object("taskd").String("name")
	return n
}

// TestStartParallel: a task's parallel items start as its children,
// named for their results; a second call starts none again.
func TestStartParallel(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	h.Put("1", taskWith("1", `{"agent":"exec","cwd":"`+h.Cwd+`","prompt":"main","parallel":["echo a","/subtask{as:facts} echo b"]}`))
	tf := h.Read("1")
	ov, _ := chain.Overrides(tf)
	for range 2 {
		if err := chain.StartParallel(t.Context(), h.Job("1", job.Run), tf, ov); err != nil {
			t.Fatal(err)
		}
	}
	ids, _ := h.List.Dir.List()
	if len(ids) != 3 {
		t.Fatalf("tasks %v, want the task and two items", ids)
	}
	for i, want := range []struct{ name, as string }{{"1-p1", ""}, {"1-p2", "facts"}} {
		m := h.Read(ids[i+1]).Metadata.Object("taskd")
		name, _ := m.String("name")
		as, _ := m.String("as")
		parent, _ := m.String("parent")
		item, _ := m.Bool("parallelItem")
		if name != want.name || as != want.as || parent != "1" || !item || task.Of(h.Read(ids[i+1])) != task.None {
			t.Errorf("item %d: %s", i+1, compact(m))
		}
	}
}

// TestSubstituteResults: $RESULT[name] is the named task's last output in
// the task's scope; a task not ended yet is waited for; a name nobody has
// is an error naming it.
func TestSubstituteResults(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	h.Put("1", taskWith("1", `{"prompt":"parent"}`))
	h.Put("2", taskWith("2", `{"parent":"1","name":"facts","state":"succeeded","attempt":1,"result":{"summary":"the summary"}}`))
	h.Put("3", taskWith("3", `{"parent":"1","name":"slow","state":"running","attempt":1}`))
	h.Put("4", taskWith("4", `{"parent":"1","name":"other","as":"plan","state":"succeeded","attempt":1,"result":{"summary":"the plan"}}`))
	h.Put("5", taskWith("5", `{"parent":"1","name":"me","prompt":"x"}`))
	run := h.List.RunDir("2", 1)
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "result.json"), []byte(`{"success":true,"summary":"the summary","output":"the whole output"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	me := h.Read("5")
	for _, tt := range []struct{ text, want, err string }{
		{"no references", "no references", ""},
		{"use $RESULT[facts] and $RESULT[plan]", "use the whole output and the plan", ""},
		{"wait for $RESULT[slow]", "", "slow"},
		{"who is $RESULT[nobody]", "", "nobody"},
	} {
		got, err := chain.SubstituteResults(h.List, me, tt.text)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("SubstituteResults(%q) = %q, %v; want an error naming %s", tt.text, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("SubstituteResults(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
		}
	}
	if got := chain.ResultWait(h.List, h.Read("1"), "$RESULT[slow] and $RESULT[facts]"); !slices.Equal(got, []string{"3"}) {
		t.Errorf("ResultWait = %v, want [3]: slow has not ended", got)
	}
}

// TestLoopCheck: after each iteration, the count, the condition command or
// the judge decides whether the loop goes on; every verdict is an event.
func TestLoopCheck(t *testing.T) {
	judge := filepath.Join(t.TempDir(), "judge.sh")
	// The judge's verdict is whatever the file next to it says.
	if err := os.WriteFile(judge, []byte("cat > /dev/null\ncat \"$0.verdict\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	fc := &config.FileConfig{
		Profiles: map[string]config.ProfileSpec{"judge-script": {Command: []string{"sh", judge}, Prompt: "stdin"}},
		Agents:   map[string]string{"judge": "judge-script"},
	}
	for _, tt := range []struct {
		name      string
		loop      prompt.Loop
		iteration int    // loopIteration before
		verdict   string // what the judge says
		command   bool   // whether the condition command's file exists
		done      bool
		reason    string
		by        string
		unjudged  bool
	}{
		{name: "a count not reached", loop: prompt.Loop{Max: 3}, by: "count"},
		{name: "a count reached", loop: prompt.Loop{Max: 3}, iteration: 2, done: true, reason: "max_reached", by: "count"},
		{name: "a command not satisfied", loop: prompt.Loop{Max: 3, UntilCommand: "test -f ok"}, by: "command"},
		{name: "a command satisfied", loop: prompt.Loop{Max: 3, UntilCommand: "test -f ok"}, command: true, done: true, reason: "satisfied", by: "command"},
		{name: "a judge's break", loop: prompt.Loop{Max: 3, Until: "done"}, verdict: "<subtask2 loop=break/>", done: true, reason: "satisfied", by: "judge"},
		{name: "a judge's continue", loop: prompt.Loop{Max: 3, Until: "done"}, verdict: "Not yet.\n<subtask2 loop=continue/>", by: "judge"},
		{name: "a judge's continue at the end", loop: prompt.Loop{Max: 3, Until: "done"}, iteration: 2, verdict: "<subtask2 loop=continue/>", done: true, reason: "max_reached", by: "judge"},
		{name: "a script judge without a verdict: not satisfied", loop: prompt.Loop{Max: 3, Until: "done"}, verdict: "I think so.", by: "judge"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{Config: fc})
			if err := os.WriteFile(judge+".verdict", []byte(tt.verdict+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.command {
				if err := os.WriteFile(filepath.Join(h.Cwd, "ok"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			h.Put("1", taskWith("1", `{"agent":"exec","cwd":"`+h.Cwd+`","prompt":"work","state":"running","attempt":`+itoa(tt.iteration+1)+`,"loopIteration":`+itoa(tt.iteration)+`}`))
			tf := h.Read("1")
			lp := tt.loop
			iteration, done, reason, stopped := chain.Looping{Job: h.Job("1", job.Run), Task: tf, Spec: spec(t, tf), Loop: &lp}.Check(t.Context(), agent.Result{Success: true, Summary: "did some"})
			var unjudged *chain.Unjudged
			if tt.unjudged {
				if !errors.As(stopped, &unjudged) || unjudged.Iteration != tt.iteration+1 {
					t.Fatalf("Check = %v, want an *Unjudged of iteration %d", stopped, tt.iteration+1)
				}
				return
			}
			if stopped != nil || iteration != tt.iteration+1 || done != tt.done || reason != tt.reason {
				t.Fatalf("Check = %d, %v, %q, %v; want %d, %v, %q\n%s", iteration, done, reason, stopped, tt.iteration+1, tt.done, tt.reason, h.Log)
			}
			evs, _ := eventlog.Read(h.List.Path())
			var it *eventlog.Event
			for i := range evs {
				if evs[i].Type == eventlog.LoopIteration {
					it = &evs[i]
				}
			}
			if it == nil || it.Data["by"] != tt.by {
				t.Errorf("LoopIteration event %+v, want one by %s", it, tt.by)
			}
		})
	}
}

// TestCheckLoop: a loop with an until condition needs a model to judge
// it: the configuration's judge, else the task's own agent, but never a
// profile that runs its prompt as a script.
func TestCheckLoop(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fc    *config.FileConfig
		agent string
		loop  *prompt.Loop
		ok    bool
	}{
		{name: "no loop", loop: nil, ok: true},
		{name: "a count", loop: &prompt.Loop{Max: 2}, ok: true},
		{name: "a command", loop: &prompt.Loop{Max: 2, UntilCommand: "true"}, ok: true},
		{name: "judged by the task's own model", agent: "claude", loop: &prompt.Loop{Max: 2, Until: "done"}, ok: true},
		{name: "judged by an exec agent", agent: "exec", loop: &prompt.Loop{Max: 2, Until: "done"}},
		{name: "judged by the configuration's judge", agent: "exec", fc: &config.FileConfig{Agents: map[string]string{"judge": "claude"}}, loop: &prompt.Loop{Max: 2, Until: "done"}, ok: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{Config: tt.fc})
			err := chain.CheckLoop(h.Env.Config, "", tt.loop, tt.agent)
			if tt.ok != (err == nil) || err != nil && !errors.Is(err, chain.ErrNoJudge) {
				t.Errorf("CheckLoop = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestContinueLoop: an iteration after which the loop goes on leaves the
// task pending, its iteration and result recorded.
func TestContinueLoop(t *testing.T) {
	h := jobtest.New(t, jobtest.Options{})
	h.Put("1", strings.Replace(taskWith("1", `{"prompt":"x","state":"running","attempt":2,"finishedAt":"t"}`), `"status":"pending"`, `"status":"in_progress"`, 1))
	tf := h.Read("1")
	got, err := chain.ContinueLoop(t.Context(), h.Job("1", job.Run), spec(t, tf), agent.Result{Success: true, Summary: "round two"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	m := got.Metadata.Object("taskd")
	n, _ := m.Int("loopIteration")
	sum, _ := m.Object("result").String("summary")
	if task.Of(got) != task.None || got.Status != taskfile.StatusPending || n != 2 || sum != "round two" || m.Has("finishedAt") {
		t.Errorf("after ContinueLoop: %s (%s)", compact(m), got.Status)
	}
}

func compact(o *taskfile.Object) string { return string(jsonorder.AppendCompact(nil, o)) }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestLoopCheck_ModelJudge: a model judge (the real Claude Code CLI,
// against a stub of the API) whose answer has no verdict is asked for one
// again in its session; still none is an *Unjudged, for a person; a
// verdict the second time decides.
func TestLoopCheck_ModelJudge(t *testing.T) {
	bin := claudestub.Binary(t)
	for _, tt := range []struct {
		name   string
		second string
		done   bool
	}{
		{"a verdict when asked again", "Now I see it.\n<subtask2 loop=break/>", true},
		{"none when asked again", "Still not sure.", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stub := claudestub.New(t, func(n int, body string) claudestub.Turn {
				if n == 1 {
					return claudestub.Turn{Text: "I think so."}
				}
				return claudestub.Turn{Text: tt.second}
			})
			fc := &config.FileConfig{
				Profiles: map[string]config.ProfileSpec{"claude": {
					Command: []string{bin, "-p", "--output-format", "stream-json", "--verbose"},
					Prompt:  "stdin", Output: "claude-stream", Env: stub.Env(t), Timeout: "2m"}},
				Agents: map[string]string{"judge": "claude"},
			}
			h := jobtest.New(t, jobtest.Options{Config: fc})
			h.Put("1", taskWith("1", `{"agent":"exec","cwd":"`+h.Cwd+`","prompt":"work","state":"running","attempt":1}`))
			tf := h.Read("1")
			lp := prompt.Loop{Max: 3, Until: "the work is done"}
			_, done, reason, stopped := chain.Looping{Job: h.Job("1", job.Run), Task: tf, Spec: spec(t, tf), Loop: &lp}.Check(t.Context(), agent.Result{Success: true, Summary: "did it"})
			bodies := stub.Bodies()
			if len(bodies) != 2 || !strings.Contains(bodies[0], "the work is done") {
				t.Fatalf("the judge was asked %d times; want twice, first with the condition\n%s", len(bodies), h.Log)
			}
			var unjudged *chain.Unjudged
			if tt.done {
				if stopped != nil || !done || reason != "satisfied" {
					t.Errorf("Check = %v, %q, %v; want satisfied", done, reason, stopped)
				}
				return
			}
			if !errors.As(stopped, &unjudged) || unjudged.Iteration != 1 || !strings.Contains(unjudged.Asked.Said, "Still not sure.") {
				t.Errorf("Check = %v, %q, %v; want an *Unjudged of iteration 1 with what the judge said", done, reason, stopped)
			}
		})
	}
}
