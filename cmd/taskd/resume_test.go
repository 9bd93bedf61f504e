package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/taskfile"
)

// TestResume_PauseReasonAndLift: the real Claude Code CLI meets a usage
// limit (HTTP 429) that pauses its task and its profile for an hour. taskd
// status (and --json) shows the profile's pause on the task it holds, and
// how to lift it; taskd resume lifts it: the paused task resumes its
// session and the held one runs. A second limit pauses the profile again;
// the daemon stops, the paused task is removed, and a restarted daemon
// still holds the profile's other task (the pause file keeps the pause)
// while a task of another profile runs, until taskd resume.
func TestResume_PauseReasonAndLift(t *testing.T) {
	isolate(t)
	bin := claudestub.Binary(t)
	var mu sync.Mutex
	limited := map[string]bool{}
	stub := claudestub.New(t, func(n int, body string) claudestub.Turn {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range []string{"the first task", "the third task"} {
			if strings.Contains(body, p) && !limited[p] {
				limited[p] = true
				return claudestub.Turn{Status: 429}
			}
		}
		return claudestub.Turn{Text: `Done. {"success": true, "summary": "done"}`}
	})
	root := filepath.Join(t.TempDir(), "tasks")
	if err := os.MkdirAll(filepath.Join(root, "l"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(t.TempDir(), "config.json")
	data, _ := json.Marshal(config.FileConfig{Profiles: map[string]config.ProfileSpec{"claude": {
		Command: []string{bin, "-p", "--output-format", "stream-json", "--verbose"}, Prompt: "stdin", Output: "claude-stream",
		Env: stub.Env(t), LimitBackoff: "1h", LimitBackoffMax: "2h",
	}}})
	writeTask(t, cfgFile, string(data))
	stop := startDaemon(t, root, cfgFile)
	defer func() { stop() }()

	cwd := t.TempDir()
	submit := func(agent, prompt string) string {
		out := mustCLI(t, "submit", "--root", root, "--list", "l", "--agent", agent, "--cwd", cwd, prompt)
		return "l/" + strings.TrimSuffix(filepath.Base(strings.TrimSpace(out)), ".json")
	}
	file := func(ref string) string { return filepath.Join(root, ref+".json") }
	state := func(ref string) task.State {
		tf, _ := taskfile.ReadFile(file(ref))
		if tf == nil {
			return ""
		}
		return task.Of(tf)
	}
	waitState := func(ref string, want task.State) {
		t.Helper()
		waitUntil(t, ref+" to be "+string(want), 2*time.Minute, func() bool { return state(ref) == want })
	}
	statusOf := func(ref string) status.Task {
		t.Helper()
		out := mustCLI(t, "status", "--root", root, "--json")
		var lists []status.List
		if err := json.Unmarshal([]byte(out), &lists); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		for _, l := range lists {
			for _, ts := range l.Tasks {
				if l.ID+"/"+ts.ID == ref {
					return ts
				}
			}
		}
		t.Fatalf("status --json has no %s:\n%s", ref, out)
		return status.Task{}
	}

	first := submit("claude", "This is the first task: say done.")
	waitState(first, task.Paused)
	second := submit("claude", "This is the second task: say done.")
	waitUntil(t, "status to show "+second+" held by the profile's pause", time.Minute, func() bool { return statusOf(second).Pause != nil })
	p := statusOf(second).Pause
	if p.Profile != "claude" || !strings.Contains(p.Reason, "429") || p.By != pausefile.ByLimit || time.Until(p.Until) < 50*time.Minute {
		t.Errorf("status --json pause of %s = %+v, want profile claude, the 429 in the agent's words, about an hour", second, p)
	}
	out := mustCLI(t, "status", "--root", root)
	text := strings.Join(strings.Fields(out), " ") // as one line: notes wrap where the times fall
	for _, want := range []string{"waiting for: profile claude is paused until", "(usage limit): API Error: Request rejected (429)", "resume now: taskd resume claude"} {
		if !strings.Contains(text, want) {
			t.Errorf("taskd status lacks %q:\n%s", want, out)
		}
	}
	if ts := statusOf(first); ts.PausedProfile != "claude" {
		t.Errorf("the paused task's pausedProfile = %q", ts.PausedProfile)
	}
	if got := len(stub.Bodies()); got != 1 {
		t.Errorf("the stub was asked %d times while the profile was paused, want once", got)
	}

	out = mustCLI(t, "resume", "--root", root, "claude")
	if !strings.Contains(out, "profile claude: pause lifted (") || !strings.Contains(out, "resume now: "+first) {
		t.Errorf("taskd resume claude printed %q", out)
	}
	waitState(first, task.Succeeded)
	waitState(second, task.Succeeded)
	var cmd struct{ Argv []string }
	raw, _ := os.ReadFile(filepath.Join(root, "l", ".taskd", "runs", strings.TrimPrefix(first, "l/"), "2", "cmd.json"))
	json.Unmarshal(raw, &cmd)
	if !slices.Contains(cmd.Argv, "--resume") {
		t.Errorf("the resumed task did not resume its session: argv %q", cmd.Argv)
	}
	if _, _, code := runCLI(t, "resume", "--root", root, "claude"); code != 1 {
		t.Errorf("taskd resume of a profile not paused: exit %d, want 1", code)
	}

	// The pause outlives a restart with no paused task left.
	third := submit("claude", "This is the third task: say done.")
	waitState(third, task.Paused)
	stop()
	mustCLI(t, "rm", "--root", root, third)
	fourth := submit("claude", "This is the fourth task: say done.")
	asked := len(stub.Bodies())
	stop = startDaemon(t, root, cfgFile)
	shell := submit("exec", "echo the daemon is scheduling")
	waitState(shell, task.Succeeded)
	if state(fourth) != task.None || len(stub.Bodies()) != asked {
		t.Fatalf("after the restart %s is %q and the stub was asked %d more times: the profile's pause was forgotten", fourth, state(fourth), len(stub.Bodies())-asked)
	}
	if p := statusOf(fourth).Pause; p == nil || p.Profile != "claude" {
		t.Errorf("after the restart, status shows %s held by %+v", fourth, p)
	}
	mustCLI(t, "resume", "--root", root, "--profile", "claude")
	waitState(fourth, task.Succeeded)
	if rec, err := pausefile.Read(root); err != nil || len(rec.Profiles) != 0 {
		t.Errorf("the pause file after resume: %+v, %v", rec, err)
	}
}
