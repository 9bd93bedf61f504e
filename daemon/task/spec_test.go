package task_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// parse parses a task file of id 1 for a test.
func parse(t *testing.T, data string) *taskfile.Task {
	t.Helper()
	tf, err := taskfile.Parse([]byte(data), "1.json", "1")
	if err != nil {
		t.Fatal(err)
	}
	return tf
}

// withTaskd is a task file of id 1 whose metadata.taskd is td.
func withTaskd(td string) string {
	return `{"id":"1","subject":"s","description":"the description","metadata":{"taskd":` + td + `}}`
}

// TestReadSpec: metadata.taskd read into a Spec, every field typed.
func TestReadSpec(t *testing.T) {
	tf := parse(t, withTaskd(`{"prompt":"p","agent":"a","model":"m","cwd":"/w","timeout":"90s","retries":2,"cancel":true,
		"resolve":"yes","permissionMode":"plan","tools":["Read"],"disallowedTools":["Bash"],"systemPrompt":"sys","worktree":true,
		"labels":["gpu"],"maxTurns":5,"maxCostUsd":2.5,"onDenied":"fail","answerRequired":true,"state":"retrying","attempt":3,
		"failures":1,"retryAt":"2030-01-02T03:04:05Z","parent":"7","sessionId":"abc","archived":true,"onBlockerFailure":"wait",
		"worker":"w","inherited":["model"],"unknownKey":{"kept":true},"model2":null}`))
	sp, err := task.ReadSpec(tf)
	if err != nil {
		t.Fatal(err)
	}
	want := task.Spec{Prompt: "p", HasPrompt: true, Agent: "a", Model: "m", Cwd: "/w", Timeout: 90 * time.Second, Retries: 2,
		Cancel: true, Resolve: "yes", PermissionMode: "plan", Tools: []string{"Read"}, DisallowTools: []string{"Bash"},
		SystemPrompt: "sys", Worktree: true, Labels: []string{"gpu"}, MaxTurns: 5, MaxCostUSD: 2.5, OnDenied: "fail",
		AnswerRequired: true, State: task.Retrying, Attempt: 3, Failures: 1, RetryAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
		Parent: "7", SessionID: "abc", Archived: true, OnBlockerFailure: "wait",
		Description: "the description", Worker: "w", Inherited: []string{"model"}, Block: map[string]any{"agent": "a", "model": "m"}}
	if got := sp; !reflect.DeepEqual(got, want) {
		t.Errorf("ReadSpec:\n got  %+v\n want %+v", got, want)
	}
	if got := task.Prompt(tf, sp); got != "p" || sp.Text() != "p" {
		t.Errorf("Prompt = %q, Text = %q", got, sp.Text())
	}
	// Without metadata.taskd.prompt the description is the prompt; a
	// timeout may be a number of seconds.
	tf = parse(t, withTaskd(`{"timeout":1.5}`))
	sp, err = task.ReadSpec(tf)
	if err != nil || sp.HasPrompt || task.Prompt(tf, sp) != "the description" || sp.Text() != "the description" || sp.Timeout != 1500*time.Millisecond {
		t.Errorf("ReadSpec = %+v, %v; prompt %q", sp, err, task.Prompt(tf, sp))
	}
	if sp, err := task.ReadSpec(parse(t, `{"id":"1","subject":"s"}`)); err != nil || !reflect.DeepEqual(sp, task.Spec{}) {
		t.Errorf("ReadSpec of a task without metadata.taskd = %+v, %v", sp, err)
	}
	if sp, err := task.ReadSpec(parse(t, `{"id":"1","subject":"s","owner":"taskd:claude"}`)); err != nil || sp.OwnerProfile != "claude" {
		t.Errorf("ReadSpec of a task owned by taskd:claude = %+v, %v", sp, err)
	}
}

// TestReadSpec_Errors: a field of the wrong type is an error that names
// it and shows how to write it.
func TestReadSpec_Errors(t *testing.T) {
	for _, tt := range []struct{ td, want string }{
		{`"x"`, `metadata.taskd is a string; it must be an object`},
		{`{"prompt":3}`, `metadata.taskd.prompt is a number, want a string (for example "prompt": "…")`},
		{`{"cancel":"yes"}`, `metadata.taskd.cancel is a string, want true or false`},
		{`{"retries":-1}`, `metadata.taskd.retries is a number, want a whole number ≥ 0`},
		{`{"retries":1.5}`, `want a whole number ≥ 0`},
		{`{"attempt":"2"}`, `metadata.taskd.attempt is a string, want a whole number`},
		{`{"tools":"Read"}`, `metadata.taskd.tools is a string, want an array of strings`},
		{`{"tools":["Read",3]}`, `want an array of strings`},
		{`{"labels":["GPU"]}`, `metadata.taskd.labels: label "GPU"`},
		{`{"labels":"gpu"}`, `want an array of labels`},
		{`{"maxCostUsd":-2}`, `want an amount of US dollars ≥ 0`},
		{`{"onDenied":"maybe"}`, `metadata.taskd.onDenied is "maybe", want "ask"`},
		{`{"timeout":"soon"}`, `metadata.taskd.timeout: "soon" is not a duration`},
		{`{"timeout":0}`, `is not a positive number of seconds`},
		{`{"timeout":true}`, `is a boolean`},
		{`{"retryAt":"tomorrow"}`, `want an RFC 3339 time`},
		{`{"onBlockerFailure":"maybe"}`, `metadata.taskd.onBlockerFailure is "maybe"`},
	} {
		_, err := task.ReadSpec(parse(t, withTaskd(tt.td)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadSpec(%s) = %v, want %q", tt.td, err, tt.want)
		}
	}
}

// TestAddressed: a task is taskd's by its owner or its metadata.taskd.
func TestAddressed(t *testing.T) {
	for _, tt := range []struct {
		data    string
		ok      bool
		profile string
	}{
		{`{"id":"1","subject":"s","owner":"taskd"}`, true, ""},
		{`{"id":"1","subject":"s","owner":"taskd:fast"}`, true, "fast"},
		{`{"id":"1","subject":"s","owner":"someone"}`, false, ""},
		{`{"id":"1","subject":"s","metadata":{"taskd":{}}}`, true, ""},
		{`{"id":"1","subject":"s","owner":"taskdx"}`, false, ""},
	} {
		ok, profile := task.Addressed(parse(t, tt.data))
		if ok != tt.ok || profile != tt.profile {
			t.Errorf("Addressed(%s) = %v, %q; want %v, %q", tt.data, ok, profile, tt.ok, tt.profile)
		}
	}
}

// TestCheckIDs: every id a task names must be a task id.
func TestCheckIDs(t *testing.T) {
	for _, tt := range []struct{ data, want string }{
		{`{"id":"1","subject":"s","blockedBy":["2"],"metadata":{"taskd":{"parent":"3","children":{"parallel":["4"]}}}}`, ""},
		{`{"id":"1","subject":"s","metadata":{"taskd":{"parent":"../x"}}}`, "metadata.taskd.parent"},
		{`{"id":"1","subject":"s","blockedBy":["2","a b"]}`, "blockedBy[1]"},
		{`{"id":"1","subject":"s","metadata":{"taskd":{"children":{"sequential":["ok","/etc"]}}}}`, "metadata.taskd.children.sequential[1]"},
		{`{"id":"1","subject":"s","metadata":{"forkState":{"branches":{"a":{"childTaskId":".."}}}}}`, "metadata.forkState.branches.a.childTaskId"},
	} {
		tf := parse(t, tt.data)
		sp, _ := task.ReadSpec(tf)
		err := task.CheckIDs(tf, sp)
		if tt.want == "" && err != nil || tt.want != "" && (!errors.Is(err, task.ErrBadID) || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckIDs(%s) = %v, want %q", tt.data, err, tt.want)
		}
	}
}

// TestBeginArchive: a new task's first state, and an ended child
// archived.
func TestBeginArchive(t *testing.T) {
	for _, tt := range []struct {
		s  task.State
		ok bool
	}{{task.None, true}, {task.Queued, true}, {task.Failed, true}, {task.Running, false}, {task.Succeeded, false}} {
		tf := &taskfile.Task{ID: "1", Subject: "s"}
		err := task.Begin(tf, tt.s)
		if tt.ok != (err == nil) || !tt.ok && !errors.Is(err, task.ErrIllegal) {
			t.Errorf("Begin(%q) = %v", tt.s, err)
			continue
		}
		if tt.ok && (task.Of(tf) != tt.s || tf.Status != taskfile.StatusPending) {
			t.Errorf("Begin(%q): state %q, status %s", tt.s, task.Of(tf), tf.Status)
		}
	}
	for _, tt := range []struct {
		s  task.State
		ok bool
	}{{task.Failed, true}, {task.Succeeded, true}, {task.Running, false}, {task.None, false}} {
		tf := parse(t, withTaskd(`{"state":"`+string(tt.s)+`"}`))
		status := tf.Status
		err := task.Archive(tf)
		archived, _ := tf.Metadata.Object("taskd").Bool("archived")
		// Its status and state stay as it ended: a failed child does not
		// show as completed.
		if tt.ok != (err == nil) || tt.ok != archived || tt.ok && (tf.Status != status || task.Of(tf) != tt.s) {
			t.Errorf("Archive of a %q task = %v; archived %v, status %s, state %q", tt.s, err, archived, tf.Status, task.Of(tf))
		}
	}
}

// TestStates: what each state is.
func TestStates(t *testing.T) {
	for _, s := range task.States {
		if !s.Known() {
			t.Errorf("%q is not known", s)
		}
		if s.Active() != (s == task.Running || s == task.Starting || s == task.Waiting) {
			t.Errorf("%q: Active = %v", s, s.Active())
		}
		if s.String() != string(s) {
			t.Errorf("%q: String = %q", s, s.String())
		}
	}
	if task.State("bogus").Known() {
		t.Error("a bogus state is known")
	}
}

// TestSince: when a task entered its state, from its times.
func TestSince(t *testing.T) {
	for _, tt := range []struct {
		td   string
		want string
	}{
		{`{"startedAt":"2030-01-01T00:00:00Z","finishedAt":"2030-01-01T01:00:00Z"}`, "2030-01-01T01:00:00Z"},
		{`{"startedAt":"2030-01-02T00:00:00Z","finishedAt":"2030-01-01T01:00:00Z"}`, "2030-01-02T00:00:00Z"},
		{`{"startedAt":"garbage"}`, ""},
		{`{}`, ""},
	} {
		got := task.Since(parse(t, withTaskd(tt.td)))
		if s := map[bool]string{true: "", false: task.Stamp(got)}[got.IsZero()]; s != tt.want {
			t.Errorf("Since(%s) = %s, want %s", tt.td, s, tt.want)
		}
	}
	if got := task.Stamp(time.Date(2030, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))); got != "2030-01-02T02:04:05.000000006Z" {
		t.Errorf("Stamp = %s", got)
	}
}

// TestMeta: Meta makes metadata.taskd where there is none, and returns
// the one there is.
func TestMeta(t *testing.T) {
	tf := &taskfile.Task{ID: "1", Subject: "s"}
	task.Meta(tf).Set("k", "v")
	if v, _ := tf.Metadata.Object("taskd").String("k"); v != "v" {
		t.Errorf("Meta did not make metadata.taskd: %v", tf.Metadata)
	}
	if task.Meta(tf) != tf.Metadata.Object("taskd") {
		t.Error("Meta made a second metadata.taskd")
	}
	if got := task.Strings(tf.Metadata.Object("taskd"), "missing"); got != nil {
		t.Errorf("Strings of a missing key = %v", got)
	}
}

// TestParseTimeout: a timeout in seconds beyond what a duration holds, or
// under a nanosecond, is refused; converted, the first was negative and
// the second zero, and either gave the attempt the default timeout.
func TestParseTimeout(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want time.Duration
		ok   bool
	}{
		{"90s", 90 * time.Second, true},
		{json.Number("1.5"), 1500 * time.Millisecond, true},
		{json.Number("1000000000"), 1e9 * time.Second, true},
		{json.Number("1e12"), 0, false},
		{json.Number("9300000000"), 0, false},
		{json.Number("1e-10"), 0, false},
		{json.Number("0"), 0, false},
		{json.Number("-1"), 0, false},
		{"0s", 0, false},
		{"3000000h", 0, false},
	} {
		got, err := task.ParseTimeout(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseTimeout(%v) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
