package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
)

// fakeAgent writes an executable called name into a directory of its own
// that prints the JSON event lines of first, waits until the file release
// exists, then prints those of rest: a stand-in for codex or opencode at
// the process boundary.
func fakeAgent(t *testing.T, name string, first, rest []string, release string) string {
	t.Helper()
	quote := func(lines []string) string {
		var b strings.Builder
		for _, l := range lines {
			b.WriteString("printf '%s\\n' '" + strings.ReplaceAll(l, "'", `'\''`) + "'\n")
		}
		return b.String()
	}
	script := "#!/bin/sh\n" + quote(first) +
		"while [ ! -e '" + release + "' ]; do sleep 0.02; done\n" + quote(rest)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAgentStreams_CodexAndOpencode: fake codex (`codex exec --json`) and
// opencode (`opencode run --format json`) executables print the event
// lines those tools print, stopping half way until the test has seen the
// first half's progress in the task file and in transcript.log; then each
// task succeeds with the result, session, turns and tokens the stream
// reported, and stdout.log keeps the raw stream.
func TestAgentStreams_CodexAndOpencode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	codexRelease, opencodeRelease := filepath.Join(dir, "codex-go-on"), filepath.Join(dir, "opencode-go-on")
	codex := fakeAgent(t, "codex", []string{
		`{"type":"thread.started","thread_id":"thread-e2e"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'go test ./...'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'go test ./...'","aggregated_output":"--- FAIL: TestLogin\nFAIL\n","exit_code":1,"status":"failed"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":5000,"cached_input_tokens":1000,"output_tokens":200}}`,
	}, []string{
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"src/login.go","kind":"update"}],"status":"completed"}}`,
		`{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Fixed the redirect. {\"success\": true, \"summary\": \"codex fixed the redirect\"}"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":3000,"cached_input_tokens":2000,"output_tokens":100}}`,
	}, codexRelease)
	const ses = "ses_e2e"
	opencode := fakeAgent(t, "opencode", []string{
		`{"type":"step_start","sessionID":"` + ses + `","part":{"type":"step-start"}}`,
		`{"type":"tool_use","sessionID":"` + ses + `","part":{"type":"tool","tool":"bash","state":{"status":"completed","input":{"command":"go test ./..."},"output":"ok  \texample.com/x\t0.01s\n"}}}`,
		`{"type":"step_finish","sessionID":"` + ses + `","part":{"type":"step-finish","reason":"tool-calls","cost":0.002,"tokens":{"input":1200,"output":80,"reasoning":0,"cache":{"read":0,"write":0}}}}`,
	}, []string{
		`{"type":"step_start","sessionID":"` + ses + `","part":{"type":"step-start"}}`,
		`{"type":"text","sessionID":"` + ses + `","part":{"type":"text","text":"All tests pass now. {\"success\": true, \"summary\": \"opencode made the tests pass\"}"}}`,
		`{"type":"step_finish","sessionID":"` + ses + `","part":{"type":"step-finish","reason":"stop","cost":0.0015,"tokens":{"input":1300,"output":20,"reasoning":0,"cache":{"read":1000,"write":0}}}}`,
	}, opencodeRelease)
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{
			"codex":    {Command: []string{codex, "exec", "--json"}, Prompt: "arg", Output: "codex-json"},
			"opencode": {Command: []string{opencode, "run", "--format", "json"}, Prompt: "arg", Output: "opencode-json"},
		}
	})
	for _, c := range []struct {
		id, agent, release string
		midTool            string  // progress.lastTool after the first half
		midTurns           int     // progress.turns after the first half
		midCost            float64 // progress.costUsd after the first half, if the agent reports it
		midLines           []string
		session, summary   string
		turns              int
		tokens             agent.Tokens
		cost               float64
		endLines           []string
		rawStart           string
		rawLines           int
	}{{
		id: "1", agent: "codex", release: codexRelease,
		midTool: "command bash -lc 'go test ./...'", midTurns: 1,
		midLines: []string{"session thread-e2e", "tool: command bash -lc 'go test ./...'", "  error: exit status 1: --- FAIL: TestLogin FAIL", "turn 1 done · 5200 tokens so far"},
		session:  "thread-e2e", summary: "codex fixed the redirect", turns: 2,
		tokens:   agent.Tokens{Input: 5000, CacheRead: 3000, Output: 300},
		endLines: []string{"tool: edit update src/login.go", `assistant: Fixed the redirect. {"success": true, "summary": "codex fixed the redirect"}`, "turn 2 done · 8300 tokens so far"},
		rawStart: `{"type":"thread.started"`, rawLines: 9,
	}, {
		id: "2", agent: "opencode", release: opencodeRelease,
		midTool: "bash go test ./...", midTurns: 1, midCost: 0.002,
		midLines: []string{"session " + ses, "tool: bash go test ./...", "  result: ok example.com/x 0.01s", "step 1 done (tool-calls) · $0.0020"},
		session:  ses, summary: "opencode made the tests pass", turns: 2,
		tokens:   agent.Tokens{Input: 2500, CacheRead: 1000, Output: 100},
		cost:     0.0035,
		endLines: []string{`assistant: All tests pass now. {"success": true, "summary": "opencode made the tests pass"}`, "step 2 done (stop) · $0.0035"},
		rawStart: `{"type":"step_start"`, rawLines: 6,
	}} {
		t.Run(c.agent, func(t *testing.T) {
			h.drop("l", c.id, execTask(c.agent+" streams", "Fix the flaky login test.", "taskd.agent", `"`+c.agent+`"`, "taskd.cwd", `"`+dir+`"`))
			transcript := filepath.Join(h.listDir("l"), ".taskd", "runs", c.id, "1", "transcript.log")
			var p agent.Progress
			h.waitFor(c.agent+"'s first half in the task file and the transcript", 30*time.Second, func() bool {
				tf := h.read("l", c.id)
				var ok bool
				p, ok = progressOf(tf)
				tr, _ := os.ReadFile(transcript)
				return ok && task.Of(tf) == task.Running && p.LastTool == c.midTool && p.Turns == c.midTurns &&
					strings.Contains(string(tr), c.midLines[len(c.midLines)-1])
			})
			if p.SessionID != c.session || p.Attempt != 1 || (c.midCost != 0 && p.CostUSD != c.midCost) {
				t.Errorf("progress while running = %+v", p)
			}
			tr, _ := os.ReadFile(transcript)
			for _, want := range c.midLines {
				if !strings.Contains(string(tr), want+"\n") {
					t.Errorf("transcript.log while running lacks %q:\n%s", want, tr)
				}
			}
			if err := os.WriteFile(c.release, nil, 0o600); err != nil {
				t.Fatal(err)
			}

			tf := h.waitState("l", c.id, task.Succeeded, time.Minute)
			var res agent.Result
			json.Unmarshal(h.runFile("l", c.id, 1, "result.json"), &res)
			if !res.Success || res.Summary != c.summary || res.SessionID != c.session || res.Turns != c.turns {
				t.Errorf("result = %+v", res)
			}
			final, _ := progressOf(tf)
			if final.Turns != c.turns || final.Tokens != c.tokens || final.SessionID != c.session || (c.cost != 0 && (final.CostUSD != c.cost || final.Estimated)) {
				t.Errorf("final progress = %+v, want %d turns, tokens %+v, cost %v", final, c.turns, c.tokens, c.cost)
			}
			tr = h.runFile("l", c.id, 1, "transcript.log")
			for _, want := range append(c.midLines, c.endLines...) {
				if !strings.Contains(string(tr), want+"\n") {
					t.Errorf("transcript.log lacks %q:\n%s", want, tr)
				}
			}
			if raw := string(h.runFile("l", c.id, 1, "stdout.log")); !strings.HasPrefix(raw, c.rawStart) || strings.Count(raw, "\n") != c.rawLines {
				t.Errorf("stdout.log is not the raw stream:\n%s", raw)
			}
		})
	}
}
