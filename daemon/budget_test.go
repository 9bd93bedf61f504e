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
