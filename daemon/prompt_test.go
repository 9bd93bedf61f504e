package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// execPromptTask is an exec task with a prompt and a working directory.
func execPromptTask(subject, prompt, cwd string) string {
	td := map[string]any{"agent": "exec", "prompt": prompt, "cwd": cwd}
	b, _ := json.Marshal(map[string]any{"subject": subject, "owner": "taskd", "metadata": map[string]any{"taskd": td}})
	return string(b)
}

func TestPrompt_Read(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "notes.md"), []byte("the notes\n/read nested.md is just text\n"), 0o644)
	// The script (the content alone) sees the round trips only through
	// $TASKD_TRANSCRIPT.
	h.drop("l", "1", execPromptTask("reads", "/read notes.md\n/read missing.md\n\ncp \"$TASKD_TRANSCRIPT\" seen.json", cwd))
	h.waitState("l", "1", task.Succeeded, 10*time.Second)

	run := filepath.Join(h.listDir("l"), ".taskd", "runs", "1", "1")
	var transcript []map[string]any
	data, _ := os.ReadFile(filepath.Join(run, "transcript.json"))
	if err := json.Unmarshal(data, &transcript); err != nil {
		t.Fatalf("transcript.json: %v\n%s", err, data)
	}
	notes, missing := filepath.Join(cwd, "notes.md"), filepath.Join(cwd, "missing.md")
	want := []struct{ role, path, content, errPart string }{
		{"assistant", notes, "", ""},
		{"tool", notes, "the notes\n/read nested.md is just text\n", ""},
		{"assistant", missing, "", ""},
		{"tool", missing, "", "no such file or directory"},
	}
	if len(transcript) != len(want) {
		t.Fatalf("transcript has %d entries, want %d:\n%s", len(transcript), len(want), data)
	}
	for i, w := range want {
		e := transcript[i]
		if e["role"] != w.role || e["path"] != w.path || w.content != "" && e["content"] != w.content ||
			w.errPart != "" && !strings.Contains(e["error"].(string), w.errPart) {
			t.Errorf("entry %d = %v, want %+v", i, e, w)
		}
		if w.role == "assistant" {
			call := e["call"].(map[string]any)
			if call["tool"] != "read" || call["path"] != w.path {
				t.Errorf("entry %d call = %v", i, call)
			}
		}
	}
	promptMD, _ := os.ReadFile(filepath.Join(run, "prompt.md"))
	for _, s := range []string{`<tool_use>{"path":"` + notes + `","tool":"read"}</tool_use>`, "the notes\n/read nested.md is just text", `error="true"`, "cp \"$TASKD_TRANSCRIPT\" seen.json"} {
		if !strings.Contains(string(promptMD), s) {
			t.Errorf("prompt.md lacks %q:\n%s", s, promptMD)
		}
	}
	if seen, _ := os.ReadFile(filepath.Join(cwd, "seen.json")); string(seen) != string(data) {
		t.Errorf("the script did not get the transcript")
	}
	var cmd struct{ Argv []string }
	raw, _ := os.ReadFile(filepath.Join(run, "cmd.json"))
	json.Unmarshal(raw, &cmd)
	if got := cmd.Argv[len(cmd.Argv)-1]; got != `cp "$TASKD_TRANSCRIPT" seen.json` {
		t.Errorf("exec script = %q, want the content alone", got)
	}

	// A path outside the roots is refused when the task is accepted.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(cwd, "link.txt"))
	for id, path := range map[string]string{"2": outside, "3": "../../../../../../etc/passwd", "4": "link.txt"} {
		h.drop("l", id, execPromptTask("escape", "/read "+path+"\necho never", cwd))
		rej := filepath.Join(h.listDir("l"), ".taskd", "rejected", id+".json.txt")
		h.waitFor("rejection of "+id, 10*time.Second, func() bool { _, err := os.Stat(rej); return err == nil })
		text, _ := os.ReadFile(rej)
		if !strings.Contains(string(text), "prompt line 1: /read "+path) || !strings.Contains(string(text), "outside the directories /read may load from") {
			t.Errorf("task %s rejection:\n%s", id, text)
		}
	}
}

// TestPrompt_Orchestrator runs seed 004's orchestrator example with exec
// agents standing in for models.
func TestPrompt_Orchestrator(t *testing.T) {
	t.Parallel()
	h := startDaemonWithCLI(t, []string{"l"})
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "requirements.md"), []byte("Pick the faster approach.\n"), 0o644)
	research := func(name, summary string) string {
		return `/push name=` + name + ` "echo '{\"success\": true, \"summary\": \"` + summary + `\"}'"`
	}
	orchestrator := strings.Join([]string{
		"/read requirements.md",
		research("research-a", "approach A takes 3s"),
		research("research-b", "approach B takes 5s"),
		"/run",
		`taskd receive --timeout 60s > results.txt`,
		`taskd receive --timeout 60s >> results.txt`,
		`grep -q '3s' results.txt && grep -q '5s' results.txt && echo 'Approach A' > DECISION.md`,
		`/push name=implement "Implement the chosen approach from DECISION.md"`,
	}, "\n")
	h.drop("l", "1", execPromptTask("orchestrate", orchestrator, cwd))
	h.waitState("l", "1", task.Succeeded, 60*time.Second)
	// The trailing /push ran before the success was recorded.
	if d, _ := os.ReadFile(filepath.Join(cwd, "DECISION.md")); string(d) != "Approach A\n" {
		t.Errorf("DECISION.md = %q", d)
	}
	kids := map[string]*taskfile.Task{}
	for _, id := range mustList(t, h.listDir("l")) {
		tf := h.read("l", id)
		if n, ok := tf.Metadata.Object("taskd").String("name"); ok {
			kids[n] = tf
		}
	}
	for _, n := range []string{"research-a", "research-b"} {
		if c := kids[n]; c == nil || stateOf(c) != task.Succeeded {
			t.Errorf("child %s: %v", n, c)
		}
	}
	impl := kids["implement"]
	if impl == nil {
		t.Fatalf("the trailing /push did not queue a follow-up\n%s", h.logs)
	}
	m := impl.Metadata.Object("taskd")
	if s, _ := m.String("state"); s != string(task.Queued) {
		t.Errorf("follow-up state %q, want queued (started by the user)", s)
	}
	if p, _ := m.String("parent"); p != "" {
		t.Errorf("a top-level task's follow-up has parent %q", p)
	}
	if by, _ := m.String("pushedBy"); by != "1" {
		t.Errorf("pushedBy = %q", by)
	}
	if a, _ := m.String("agent"); a != "exec" {
		t.Errorf("follow-up agent %q, want inherited exec", a)
	}
	// Queued follow-ups do not run by themselves.
	if stateOf(h.read("l", impl.ID)) != task.Queued {
		t.Errorf("the follow-up ran without being started")
	}
	if got := countEvents(h.events("l"), eventlog.TaskStarted, impl.ID); got != 0 {
		t.Errorf("follow-up started %d times", got)
	}
}

// TestPrompt_ReadBesideHome: with the home directly under /tmp, as in many
// CI sandboxes, a task whose directory is beside the home (under /tmp
// too) reads its own files and those of allowedRoots: the directories
// beside a home are no one's until the user database says whose they are.
func TestPrompt_ReadBesideHome(t *testing.T) {
	tmp := func(pattern string) string {
		d, err := os.MkdirTemp("/tmp", pattern)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Setenv("HOME", tmp("home"))
	project, data := tmp("project"), tmp("data")
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.AllowedRoots = []string{data} })
	os.WriteFile(filepath.Join(project, "notes.md"), []byte("the project's notes\n"), 0o644)
	os.WriteFile(filepath.Join(data, "table.csv"), []byte("a,b\n"), 0o644)
	h.drop("l", "1", execPromptTask("reads", "/read notes.md\n/read "+filepath.Join(data, "table.csv")+"\n\ntrue", project))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	prompt, _ := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", "1", "1", "prompt.md"))
	for _, s := range []string{"the project's notes", "a,b"} {
		if !strings.Contains(string(prompt), s) {
			t.Errorf("prompt.md lacks %q:\n%s", s, prompt)
		}
	}
	if strings.Contains(string(prompt), `error="true"`) {
		t.Errorf("a read was refused:\n%s", prompt)
	}
}
