package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
)

// Each iteration of a loop after the first is told why the loop goes on:
// the judge's answer (until) or how the condition command ended
// (untilCommand), in prompt.md and, for an exec agent, $TASKD_FEEDBACK.
func TestFeedback_LoopIterations(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"judge-script": scriptProfile(t, "judge", `cat >/dev/null
if [ "$(wc -l < count)" -ge 3 ]; then echo 'done <subtask2 loop=break/>'; else echo "not yet: JUDGE-SAYS-$(wc -l < count | tr -d ' ') lines"; fi`)}
		fc.Agents = map[string]string{"judge": "judge-script"}
	})
	judged, checked := t.TempDir(), t.TempDir()
	h.drop("l", "1", s2Task(`/subtask {until:three lines && loop:5}
echo x >> count; printf '%s' "$TASKD_FEEDBACK" > feedback.$(wc -l < count | tr -d ' ')`, judged, nil))
	h.drop("l", "2", s2Task(`/subtask {untilCommand:"test $(wc -l < count) -ge 2 || { echo CMD-SAYS-NO; exit 4; }" && loop:5}
echo x >> count`, checked, nil))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	h.waitState("l", "2", task.Succeeded, 30*time.Second)

	if p := h.runText("l", "1", 1, "prompt.md"); strings.Contains(p, "Before this iteration") {
		t.Errorf("the first iteration was told of one before it:\n%s", p)
	}
	for n, want := range map[int][]string{
		2: {"This is iteration 2 of at most 5 of this task.", "<user-condition>\nthree lines\n</user-condition>", "not yet: JUDGE-SAYS-1 lines"},
		3: {"This is iteration 3 of at most 5", "not yet: JUDGE-SAYS-2 lines"},
	} {
		p := h.runText("l", "1", n, "prompt.md")
		fb, _ := os.ReadFile(filepath.Join(judged, "feedback."+itoa(n)))
		for _, w := range want {
			if !strings.Contains(p, w) || !strings.Contains(string(fb), w) {
				t.Errorf("iteration %d: prompt.md or $TASKD_FEEDBACK lacks %q:\n%s\n--\n%s", n, w, p, fb)
			}
		}
	}
	p := h.runText("l", "2", 2, "prompt.md")
	for _, w := range []string{"This is iteration 2 of at most 5", "exited with status 4", "CMD-SAYS-NO"} {
		if !strings.Contains(p, w) {
			t.Errorf("untilCommand iteration 2 lacks %q:\n%s", w, p)
		}
	}
}

// A judge that cannot judge (it fails twice) ends the loop in error; the
// task does not pass as if the loop had run its course.
func TestFeedback_JudgeThatFailsEndsTheLoop(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"broken": scriptProfile(t, "broken", `cat >/dev/null; echo 'no model here' >&2; exit 2`)}
		fc.Agents = map[string]string{"judge": "broken"}
	})
	h.drop("l", "1", s2Task("/subtask {until:done && loop:4} echo x >> count", t.TempDir(), nil))
	tf := h.waitState("l", "1", task.Failed, 30*time.Second)
	m := tf.Metadata.Object("taskd")
	if e, _ := m.String("error"); !strings.Contains(e, "could not be judged") || !strings.Contains(e, "broken profile) failed twice") {
		t.Errorf("error = %q", e)
	}
	if n, _ := m.Int("attempt"); n != 1 {
		t.Errorf("the loop ran %d iterations after its judge failed", n)
	}
	evs := h.waitEvents("l", eventlog.LoopExited, "1", 1)
	for _, e := range evs {
		if e.Type == eventlog.LoopExited && e.Data["exitReason"] != "error" {
			t.Errorf("LoopExited %v", e.Data)
		}
	}
}

// A handoff's retry tells the child's new attempt how the one before it
// failed; metrics count the subagent once, its retry as a retry, and a
// subagent refused by its permission scope as refused, not as an end.
func TestFeedback_HandoffRetryAndMetrics(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	child := `if [ "$TASKD_ATTEMPT" -eq 1 ]; then echo 'half done'; echo 'CHILD-FAIL-99: the schema is missing' >&2; exit 5; fi; ` +
		`printf '%s' "$TASKD_FEEDBACK" > feedback.txt; ` + resultJSON(`"summary": "fixed"`)
	prompt := "/delegate " + q(child) + " --agent-type builder\n" +
		"/delegate " + q("echo never") + " --agent-type tester --permission-mode bypassPermissions\n" +
		"/handoff builder-1 --transfer-control --on-failure retry\n\necho parent done"
	h.drop("l", "1", parentTask(prompt, cwd, map[string]any{"permissionMode": "acceptEdits"}))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	id := h.childNamed("l", "1", "builder-1")
	p := h.runText("l", id, 2, "prompt.md")
	fb, _ := os.ReadFile(filepath.Join(cwd, "feedback.txt"))
	for _, w := range []string{"This is attempt 2 of this task; attempt 1 failed", "CHILD-FAIL-99: the schema is missing", "half done"} {
		if !strings.Contains(p, w) || !strings.Contains(string(fb), w) {
			t.Errorf("the retried child was not told %q:\n%s\n--\n%s", w, p, fb)
		}
	}
	m := subagent.ComputeMetrics(h.waitEvents("l", eventlog.TaskSucceeded, "1", 1))
	if m.Spawned != 1 || m.Ended != 1 || m.Running != 0 || m.Retries != 1 || m.Refused != 1 || m.Succeeded != 1 {
		t.Errorf("metrics: spawned %d, ended %d, running %d, retries %d, refused %d, succeeded %d; want 1, 1, 0, 1, 1, 1",
			m.Spawned, m.Ended, m.Running, m.Retries, m.Refused, m.Succeeded)
	}
	if m.Spawned != m.Ended+m.Running {
		t.Errorf("spawned %d != ended %d + running %d", m.Spawned, m.Ended, m.Running)
	}
}
