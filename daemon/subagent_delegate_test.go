package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// TestDelegate_PromptLine runs a /delegate line end to end: the child is
// started at once (the parent's agent does not wait for it), records its
// agent type and scope, and the seed's events follow one another with
// their fields.
func TestDelegate_PromptLine(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	child := "sleep 0.5; touch built; " + resultJSON(`"summary": "built it"`)
	prompt := "/delegate " + q(child) + " --agent-type builder --timeout 60\n\n" +
		`if [ -n "$TASKD_RESULTS" ]; then exit 0; fi` + "\n" +
		"test -f built && exit 7; echo parent went on"
	h.drop("l", "1", parentTask(prompt, cwd, map[string]any{"permissionMode": "acceptEdits"}))
	parent := h.waitState("l", "1", task.Succeeded, 30*time.Second)
	id := h.childNamed("l", "1", "builder-1")
	c := h.read("l", id)

	m := c.Metadata.Object("taskd")
	for k, want := range map[string]any{
		"agentType": "builder", "permissionMode": "acceptEdits", "inheritContext": false, "timeout": "1m0s",
		"allowBypass": false, "parent": "1", "agent": "builder", "state": task.Succeeded,
		"tools": []any{"Read", "Edit", "Write", "Bash", "Glob", "Grep"},
	} {
		if got, _ := m.Get(k); !equalJSON(got, want) {
			t.Errorf("child metadata.taskd.%s = %v, want %v", k, got, want)
		}
	}
	if _, ok := m.String("spawnedAt"); !ok {
		t.Errorf("child has no spawnedAt")
	}
	// The parent's agent ran while the child still worked (no "built"
	// yet), then waited and was resumed with the result.
	if got := countEvents(h.events("l"), eventlog.TaskResumed, "1"); got != 1 {
		t.Errorf("parent resumed %d times, want 1", got)
	}
	if done := stringsOf(parent.Metadata.Object("taskd").Object("children"), "done"); len(done) != 1 || done[0] != id {
		t.Errorf("parent's done children = %v", done)
	}

	evs := h.waitEvents("l", eventlog.TranscriptEvent, id, 2)
	common := map[string]any{"subagent_id": id, "session_id": "1", "agent_type": "builder", "permission_mode": "acceptEdits",
		"task_description": child, "spawn_timestamp": nil}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range common {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	got := checkSequence(t, evs, []wantEvent{
		{eventlog.TaskStarted, "1", nil},
		{eventlog.SubagentSpawned, id, with(map[string]any{"parent_session_id": "1"})},
		{eventlog.TranscriptEvent, id, with(map[string]any{"event_type": "subagent_start"})},
		{eventlog.SubagentActive, id, with(map[string]any{"initial_state": "running"})},
		{eventlog.TaskSucceeded, id, nil},
		{eventlog.TranscriptEvent, id, with(map[string]any{"event_type": "subagent_stop", "outcome": "success",
			"completion_timestamp": nil, "duration_ms": nil, "artifact_paths": []any{
				filepath.Join(".taskd", "runs", id, "1", "result.json"), filepath.Join(".taskd", "runs", id, "1", "stdout.log")}})},
	})
	if got[1].Parent != "1" {
		t.Errorf("SubagentSpawned parent = %q, want 1", got[0].Parent)
	}
	if n := countEvents(evs, eventlog.SubagentSpawned, id); n != 1 {
		t.Errorf("%d SubagentSpawned events, want 1 (the line ran twice?)", n)
	}
}

// TestDelegate_Command runs taskd delegate inside an agent, with
// --inherit-context and --tools: the child gets the parent's /read files
// and its prompt as system prompt, and the tools asked for.
func TestDelegate_Command(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "notes.md"), []byte("the shared notes\n"), 0o644)
	child := `cp "$TASKD_TRANSCRIPT" child-transcript.json; ` + resultJSON(`"summary": "tested"`)
	prompt := "/read notes.md\n\nRun the tests.\n" +
		`if [ -n "$TASKD_RESULTS" ]; then exit 0; fi` + "\n" +
		`id=$(taskd delegate '` + strings.ReplaceAll(child, `'`, `'\''`) + `' --agent-type tester --inherit-context --tools Read) || exit 5` + "\n" +
		`echo "$id" > child.id` + "\n" +
		`taskd delegate 'touch widened' --agent-type builder --permission-mode bypassPermissions > refused.id 2> refused.err; echo $? > refused.rc`
	h.drop("l", "1", parentTask(prompt, cwd, map[string]any{"tools": []string{"Read", "Bash"}, "permissionMode": "acceptEdits"}))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	data, err := os.ReadFile(filepath.Join(cwd, "child.id"))
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(data))
	c := h.waitState("l", id, task.Succeeded, 20*time.Second)
	m := c.Metadata.Object("taskd")
	if got, want := tdString(c, "name"), "tester-1"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	if got, want := tdString(c, "permissionMode"), "plan"; got != want {
		t.Errorf("permissionMode = %q, want %q (the tester's)", got, want)
	}
	if got, _ := m.Get("tools"); !equalJSON(got, []any{"Read"}) {
		t.Errorf("tools = %v, want [Read]", got)
	}
	if got, _ := m.Bool("inheritContext"); !got {
		t.Errorf("inheritContext not recorded")
	}
	if p := tdString(c, "prompt"); !strings.HasPrefix(p, "/read notes.md\n\n") {
		t.Errorf("child prompt does not start with the parent's /read lines:\n%s", p)
	}
	if sys := tdString(c, "systemPrompt"); !strings.Contains(sys, "Run the tests.") || !strings.Contains(sys, "subagent of type tester working for task 1") {
		t.Errorf("child system prompt = %q", sys)
	}
	transcript, _ := os.ReadFile(filepath.Join(cwd, "child-transcript.json"))
	if !strings.Contains(string(transcript), "the shared notes") {
		t.Errorf("the child did not read the parent's context file:\n%s", transcript)
	}
	if rc := strings.TrimSpace(readFile(t, filepath.Join(cwd, "refused.rc"))); rc != "1" {
		t.Errorf("a widening taskd delegate exited %s, want 1", rc)
	}
	if e := readFile(t, filepath.Join(cwd, "refused.err")); !strings.Contains(e, "wider than the parent's acceptEdits") {
		t.Errorf("a widening taskd delegate said %q", e)
	}
	refused := h.waitState("l", strings.TrimSpace(readFile(t, filepath.Join(cwd, "refused.id"))), task.Failed, 10*time.Second)
	if _, err := os.Stat(filepath.Join(cwd, "widened")); err == nil || tdString(refused, "name") != "builder-1" {
		t.Errorf("the refused subagent %s ran or is misnamed", refused.ID)
	}
	evs := h.waitEvents("l", eventlog.SubagentActive, id, 1)
	checkSequence(t, evs, []wantEvent{
		{eventlog.SubagentSpawned, id, map[string]any{"agent_type": "tester", "permission_mode": "plan", "tools": []any{"Read"}}},
		{eventlog.TranscriptEvent, id, map[string]any{"event_type": "subagent_start"}},
		{eventlog.SubagentActive, id, map[string]any{"initial_state": "running"}},
	})
}

func equalJSON(a, b any) bool { return string(mustJSON(a)) == string(mustJSON(b)) }

// TestDelegate_InheritSession: with --inherit-context, a subagent whose
// profile is claude's resumes its parent's last Claude session as a new
// one (--resume ID --fork-session), with its scope as flags.
func TestDelegate_InheritSession(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"fakeclaude": {
			Command: []string{"sh", "-c", `printf '%s\n' "$@" > "$TASKD_RUN_DIR/argv"; cat > /dev/null; echo '{"success": true}'`, "claude"},
			Prompt:  "stdin", Flags: "claude"}}
		fc.Agents["analyzer"] = "fakeclaude"
	})
	cwd := t.TempDir()
	parent := map[string]any{"subject": "parent", "owner": "taskd", "metadata": map[string]any{"taskd": map[string]any{
		"agent": "exec", "cwd": cwd, "permissionMode": "acceptEdits",
		"prompt": `[ -n "$TASKD_RESULTS" ] && exit 0; taskd delegate 'look at it' --agent-type analyzer --inherit-context > child.id`,
		"result": map[string]any{"success": true, "summary": "earlier", "sessionId": "sess-parent"}}}}
	data, _ := json.Marshal(parent)
	h.drop("l", "1", string(data))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	id := strings.TrimSpace(readFile(t, filepath.Join(cwd, "child.id")))
	h.waitState("l", id, task.Succeeded, 10*time.Second)
	argv := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(h.listDir("l"), ".taskd", "runs", id, "1", "argv"))), "\n")
	for _, want := range [][]string{{"--permission-mode", "plan"}, {"--allowedTools", "Read,Grep,Glob"}, {"--resume", "sess-parent", "--fork-session"}} {
		if i := slices.Index(argv, want[0]); i < 0 || !slices.Equal(argv[i:min(i+len(want), len(argv))], want) {
			t.Errorf("argv %q lacks %q", argv, want)
		}
	}
	if i := slices.Index(argv, "--append-system-prompt"); i < 0 || !strings.Contains(argv[i+1], "subagent of type analyzer working for task 1") {
		t.Errorf("argv %q lacks the parent's context as system prompt", argv)
	}
}

// TestDelegate_OwnTimeout: a subagent that outlives its --timeout is
// stopped (its process is gone) and logged with SubagentTimeout.
func TestDelegate_OwnTimeout(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	h.drop("l", "1", parentTask("/delegate "+q("echo $$ > kid.pid; exec sleep 30")+" --agent-type analyzer --timeout 1\n\n"+
		`[ -n "$TASKD_RESULTS" ] || echo parent`, cwd, nil))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	id := h.childNamed("l", "1", "analyzer-1")
	if s := stateOf(h.read("l", id)); s != task.TimedOut {
		t.Errorf("child state %q, want timed_out", s)
	}
	if pid := readPid(t, filepath.Join(cwd, "kid.pid")); alive(pid) {
		t.Errorf("the timed-out subagent's process %d is alive", pid)
	}
	evs := h.waitEvents("l", eventlog.SubagentTimeout, id, 1)
	checkSequence(t, evs, []wantEvent{
		{eventlog.TaskTimedOut, id, nil},
		{eventlog.TranscriptEvent, id, map[string]any{"event_type": "subagent_stop", "outcome": "timeout"}},
		{eventlog.SubagentTimeout, id, map[string]any{"source": "subagent", "timeout": "1s", "outcome": "timeout", "agent_type": "analyzer"}},
	})
}
