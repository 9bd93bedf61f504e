package daemon_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
)

// TestClaude_Budgets: the real Claude Code CLI, whose stub keeps calling
// tools, is given --max-turns from the task's maxTurns and stops itself
// there; one whose stub holds its second answer back is stopped by taskd
// as soon as the stream shows it has spent more than maxCostUsd. Both
// tasks fail with the reason, and neither is retried.
func TestClaude_Budgets(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	never := make(chan struct{}) // the held answer never comes: the agent must be stopped
	stub := claudestub.New(t, func(n int, body string) claudestub.Turn {
		if strings.Contains(body, "Spend") && strings.Contains(body, `"tool_result"`) {
			return claudestub.Turn{Hold: never, Text: "never"}
		}
		return claudestub.Turn{Bash: "echo again"}
	})
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{})
	})
	cwd := t.TempDir()
	h.drop("l", "1", `{"subject": "turns", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+cwd+`", "tools": ["Bash"], "maxTurns": 1, "retries": 2, "prompt": "Keep going."}}}`)
	h.drop("l", "2", `{"subject": "dollars", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+cwd+`", "tools": ["Bash"], "maxCostUsd": 0.00001, "retries": 2, "prompt": "Spend."}}}`)

	for _, tt := range []struct {
		id, reason string
	}{
		{"1", "stopped: it reached its budget of 1 turns (maxTurns)"},
		{"2", "over its budget of $0.00001 (maxCostUsd)"},
	} {
		tf := h.waitState("l", tt.id, task.Failed, 2*time.Minute)
		m := tf.Metadata.Object("taskd")
		if e, _ := m.String("error"); !strings.Contains(e, tt.reason) || !strings.Contains(e, "; logs: ") {
			t.Errorf("task %s: error %q, want %q", tt.id, e, tt.reason)
		}
		if n, _ := m.Int("attempt"); n != 1 {
			t.Errorf("task %s over budget was retried: attempt %d", tt.id, n)
		}
		var res agent.Result
		json.Unmarshal(h.runFile("l", tt.id, 1, "result.json"), &res)
		if res.Outcome != "over_budget" {
			t.Errorf("task %s: result.json outcome %q", tt.id, res.Outcome)
		}
	}
	if argv := h.argvOf("l", "1", 1); !slices.Contains(argv, "--max-turns") || argv[slices.Index(argv, "--max-turns")+1] != "1" {
		t.Errorf("argv %q lacks --max-turns 1", argv)
	}
	if e, _ := h.read("l", "2").Metadata.Object("taskd").String("error"); !strings.Contains(e, "it had spent about $") {
		t.Errorf("task 2's error %q does not say what it spent", e)
	}
}

// TestClaude_BudgetStopsBeforeTurn: the real Claude Code CLI whose first
// turn costs about $0.50 (the stub reports 20,000 output tokens) and asks
// for a tool is stopped before its second turn when its budget is $0.80:
// the next turn, estimated at the last one's cost, would pass it. The
// stub is asked once, and what was spent stays under the budget. With a
// budget of $5 the same agent takes both turns and succeeds.
func TestClaude_BudgetStopsBeforeTurn(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, func(n int, body string) claudestub.Turn {
		if strings.Contains(body, `"tool_result"`) {
			return claudestub.Turn{Text: "done", OutputTokens: 20000}
		}
		if strings.Contains(body, "Spend") {
			// A slow tool: the agent must be stopped while it runs,
			// before the call that would answer it.
			return claudestub.Turn{Bash: "sleep 15; echo again", OutputTokens: 20000}
		}
		return claudestub.Turn{Bash: "echo again", OutputTokens: 20000}
	})
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{})
	})
	cwd := t.TempDir()
	h.drop("l", "1", `{"subject": "tight", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+cwd+`", "tools": ["Bash"], "maxCostUsd": 0.8, "prompt": "Spend."}}}`)
	tf := h.waitState("l", "1", task.Failed, 2*time.Minute)
	e, _ := tf.Metadata.Object("taskd").String("error")
	if !strings.Contains(e, "stopped before its next turn: it had spent about $0.5") || !strings.Contains(e, "of its budget of $0.8 (maxCostUsd)") {
		t.Errorf("error %q, want it stopped before its next turn", e)
	}
	if n := len(stub.Bodies()); n != 1 {
		t.Errorf("the stub was asked %d times, want once: the second turn was not stopped", n)
	}
	var res agent.Result
	json.Unmarshal(h.runFile("l", "1", 1, "result.json"), &res)
	if res.Outcome != "over_budget" || res.Progress == nil || res.Progress.CostUSD > 0.8 || res.Progress.CostUSD < 0.5 {
		t.Errorf("result.json: outcome %q, progress %+v; want over_budget, spent between $0.50 and $0.80", res.Outcome, res.Progress)
	}
	if argv := h.argvOf("l", "1", 1); !slices.Contains(argv, "--include-partial-messages") {
		t.Errorf("argv %q lacks --include-partial-messages: the stream would not give each turn's usage", argv)
	}

	h.drop("l", "2", `{"subject": "plenty", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+cwd+`", "tools": ["Bash"], "maxCostUsd": 5, "prompt": "Plenty."}}}`)
	h.waitState("l", "2", task.Succeeded, 2*time.Minute)
	if n := len(stub.Bodies()); n != 3 {
		t.Errorf("the stub was asked %d times in all, want 3 (both turns of task 2)", n)
	}
}
