package daemon_test

import (
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
)

// TestFlow_RealClaudeEscalationSaysWhy: the built-in quick-task workflow,
// its check failed twice by the real Claude Code CLI (against the stub)
// with a reason, asks a person; what it waits for (metadata.taskd.hitl's
// reason, taskd status's "waiting for") carries the check's last report,
// which the person's answer and note respond to, not only that the
// retries were spent.
func TestFlow_RealClaudeEscalationSaysWhy(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	const reason = "REVIEW-7: the greeting lacks its comma"
	stub := claudestub.New(t, textAnswer(func(body string) string {
		if strings.Contains(body, "## Step: Check the work") {
			return `Not yet. {"success": false, "summary": "` + reason + `"}`
		}
		return `Changed it. {"success": true, "summary": "work done"}`
	}))
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{})
	})
	h.drop("l", "1", flowTask("1", "quick-task", "Add a greeting", ""))
	tf := h.waitState("l", "1", task.NeedsHuman, 3*time.Minute)
	got, _ := tf.Metadata.Object("taskd").Object("hitl").String("reason")
	if !strings.Contains(got, "max retries exceeded at verify") || !strings.Contains(got, reason) {
		t.Errorf("hitl reason %q, want the spent retries and the check's report %q", got, reason)
	}
	// The work step after the failed check is told its report once:
	// the summary, not an error that restates it.
	if p := h.runText("l", "1", 3, "prompt.md"); !strings.Contains(p, "Summary: "+reason) || strings.Count(p, reason) != 2 {
		t.Errorf("the second work step's prompt does not give the check's report once (summary, and the output's end):\n%s", p)
	}
	lists, err := status.Snapshot(h.root, []string{"l"}, false)
	if err != nil || len(lists) != 1 || len(lists[0].Tasks) != 1 {
		t.Fatalf("snapshot: %v %+v", err, lists)
	}
	if w := lists[0].Tasks[0].WaitingFor; !strings.Contains(w, reason) {
		t.Errorf("taskd status: waiting for %q, want the check's report %q", w, reason)
	}
}
