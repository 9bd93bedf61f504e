package daemon_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
)

// TestRetry_RealClaudeToldWhyOnce: a task with a retry whose claude agent
// (the real Claude Code CLI, against the stub) reports failure in its own
// words is tried again, and the retry's prompt gives those words as the
// failed attempt's summary, once: not again as an error that restates
// them.
func TestRetry_RealClaudeToldWhyOnce(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	const reason = "LOGIN-42: the redirect still loops"
	var mu sync.Mutex
	runs := 0
	stub := claudestub.New(t, textAnswer(func(string) string {
		mu.Lock()
		defer mu.Unlock()
		if runs++; runs == 1 {
			return `Not fixed. {"success": false, "summary": "` + reason + `"}`
		}
		return `Fixed. {"success": true, "summary": "fixed"}`
	}))
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{})
	})
	h.drop("l", "1", `{"subject": "Fix the login redirect", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "retries": 1, "prompt": "Fix the login redirect."}}}`)
	h.waitState("l", "1", task.Succeeded, 3*time.Minute)
	p := h.runText("l", "1", 2, "prompt.md")
	if !strings.Contains(p, "Summary: "+reason) || strings.Contains(p, "Error: the agent reported failure") {
		t.Errorf("the retry's prompt does not give the failed attempt's reason once, as its summary:\n%s", p)
	}
}
