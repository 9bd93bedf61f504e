package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
)

// The summary the agent of TestShow_RealClaude reports.
const realSummary = "Replaced the fixed sleep in the login test with a wait for the ready event; the suite passes."

// TestShow_RealClaude: a task run by the real Claude Code CLI (against
// the loopback stub: a Bash call, then its report) ends with its summary
// and cost where a person looks after lunch: taskd show, status --json,
// wait's line and --json, the success notification, and show --json, all
// agreeing with the attempt's result.json.
func TestShow_RealClaude(t *testing.T) {
	isolate(t)
	bin := claudestub.Binary(t)
	root := filepath.Join(t.TempDir(), "tasks")
	project := t.TempDir()
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		if strings.Contains(body, `"tool_result"`) {
			return claudestub.Turn{Text: "The test passes now.\n" + `{"success": true, "summary": "` + realSummary + `"}`, OutputTokens: 40}
		}
		return claudestub.Turn{Bash: "echo all 41 tests pass", OutputTokens: 20}
	})
	notices := filepath.Join(t.TempDir(), "notices")
	startTestDaemon(t, root, &config.FileConfig{Profiles: map[string]config.ProfileSpec{"claude": {
		Command: []string{bin, "-p", "--output-format", "stream-json", "--verbose"}, Prompt: "stdin", Output: "claude-stream",
		Env: stub.Env(t), Timeout: "2m",
	}}, Notify: &config.NotifySpec{Succeeded: true, Command: []string{"sh", "-c",
		`printf '%s|%s|%s|%s\n' "$TASKD_TASK_ID" "$TASKD_STATE" "$TASKD_SUMMARY" "$TASKD_COST_USD" >> ` + notices}}})
	if _, errOut, code := runCLI(t, "submit", "--root", root, "--list", "demo", "--cwd", project, "--tools", "Bash(echo:*)",
		"--subject", "Fix the flaky login test", "Fix the flaky login test."); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	out, errOut, code := runCLI(t, "wait", "--root", root, "--timeout", "3m", "demo/1")
	if code != 0 {
		t.Fatalf("wait: exit %d: %s %s", code, out, errOut)
	}
	var res agent.Result
	data, _ := os.ReadFile(filepath.Join(root, "demo", ".taskd", "runs", "1", "1", "result.json"))
	if err := json.Unmarshal(data, &res); err != nil || res.CostUSD == nil || res.Summary != realSummary || res.Turns != 2 || res.Progress == nil {
		t.Fatalf("result.json (%v): %s", err, data)
	}
	cost := costWords(*res.CostUSD, false)
	if want := "demo/1 succeeded: " + realSummary + " (" + cost + ")\n"; out != want {
		t.Errorf("wait printed %q, want %q", out, want)
	}

	out, _, code = runCLI(t, "wait", "--root", root, "--json", "demo/1")
	var end waitEnd
	if err := json.Unmarshal([]byte(out), &end); code != 0 || err != nil || end.Task != "demo/1" || end.Outcome != "succeeded" || !end.Success ||
		end.Summary != realSummary || end.CostUSD == nil || *end.CostUSD != *res.CostUSD {
		t.Errorf("wait --json: exit %d, %v: %s", code, err, out)
	}

	// The notification of its success.
	want := "1|succeeded|" + realSummary + "|" + strconv.FormatFloat(*res.CostUSD, 'f', -1, 64) + "\n"
	waitUntil(t, "the notification", time.Minute, func() bool { data, _ := os.ReadFile(notices); return len(data) > 0 })
	if data, _ := os.ReadFile(notices); string(data) != want {
		t.Errorf("notification %q, want %q", data, want)
	}

	// status --json
	out, _, _ = runCLI(t, "status", "--root", root, "--json", "demo/1")
	var l status.List
	if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Tasks) != 1 {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if got := l.Tasks[0]; got.Summary != realSummary || got.CostUSD == nil || *got.CostUSD != *res.CostUSD {
		t.Errorf("status --json: summary %q, cost %v; want %q, %v", got.Summary, got.CostUSD, realSummary, *res.CostUSD)
	}

	// show --json
	out, errOut, code = runCLI(t, "show", "--root", root, "--json", "demo/1")
	var d status.Detail
	if err := json.Unmarshal([]byte(out), &d); code != 0 || err != nil {
		t.Fatalf("show --json: exit %d, %v: %s\n%s", code, err, errOut, out)
	}
	tok := res.Progress.Tokens
	checks := []struct {
		what      string
		got, want any
	}{
		{"outcome", d.Outcome, "succeeded"},
		{"summary", d.Summary, realSummary},
		{"agent", d.Agent, "claude"},
		{"attempts", d.Attempts, 1},
		{"turns", d.Last.Turns, 2},
		{"tokens", d.Last.Tokens, tok.Input + tok.Output + tok.CacheRead + tok.CacheWrite},
		{"cost", fmt.Sprint(*d.Last.CostUSD), fmt.Sprint(*res.CostUSD)},
		{"duration", d.Last.DurationMs, res.DurationMs},
		{"cwd", d.Cwd, project},
		{"run folder", d.Logs, filepath.Join(root, "demo", ".taskd", "runs", "1", "1")},
		{"output file", d.Output.File, filepath.Join(d.Logs, "transcript.log")},
		{"finished", d.FinishedAt.IsZero(), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("show --json %s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if d.Last.Tokens == 0 || *d.Last.CostUSD <= 0 {
		t.Errorf("show --json: no tokens or cost: %+v", d.Last)
	}
	if last := d.Output.Lines; len(last) == 0 || !strings.Contains(strings.Join(last, "\n"), "all 41 tests pass") {
		t.Errorf("show --json output lines %q, want the Bash call's result among them", last)
	}

	// taskd show, as a person reads it.
	out, errOut, code = runCLI(t, "show", "--root", root, "demo/1")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"demo/1 · Fix the flaky login test\n",
		"state:    succeeded ",
		", after 1 attempt\n",
		"summary:  Replaced the fixed sleep in the login test with a wait for the ready\n          event; the suite passes.\n",
		"agent:    claude · ran " + span(time.Duration(res.DurationMs)*time.Millisecond) + " · 2 turns · " + tokens(d.Last.Tokens) + " tokens · " + cost + "\n",
		"in:       " + project + "\n",
		"run:      " + d.Logs + "\n",
		"Last lines of its transcript",
		"all 41 tests pass",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show does not say %q:\n%s", want, out)
		}
	}
	checkStatusText(t, out, false)
	if testing.Verbose() {
		t.Logf("taskd show demo/1:\n%s", out)
	}
	if state := stateIn(t, root, "demo", "1"); state != task.Succeeded {
		t.Errorf("state %s", state)
	}
}
