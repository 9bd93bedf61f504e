package daemon_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
)

// TestClaude_TimeoutSaysWhy: the real Claude Code CLI that cannot reach
// its API (a closed port: it retries the call) or whose API never answers
// (a stub that holds every answer) is stopped at its timeout, and the
// task's reason says what the agent was stuck on, in its own terms, not a
// bare "timed out".
func TestClaude_TimeoutSaysWhy(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	silent := claudestub.New(t, func(int, string) claudestub.Turn { return claudestub.Turn{Hold: never, Text: "never"} })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close() // nothing listens there now: every connection is refused

	profile := func(env []string, baseURL string) config.ProfileSpec {
		var keep []string
		for _, e := range env {
			if !strings.HasPrefix(e, "ANTHROPIC_BASE_URL=") {
				keep = append(keep, e)
			}
		}
		return config.ProfileSpec{Command: []string{bin, "-p", "--output-format", "stream-json", "--verbose"}, Prompt: "stdin",
			Output: "claude-stream", Flags: "claude", Env: append(keep, "ANTHROPIC_BASE_URL="+baseURL)}
	}
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{
			"unreachable": profile(silent.Env(t), closed),
			"silent":      profile(silent.Env(t), silent.URL),
		}
	})
	cwd := t.TempDir()
	h.drop("l", "1", `{"subject": "unreachable", "owner": "taskd", "metadata": {"taskd": {"agent": "unreachable", "cwd": "`+cwd+`", "timeout": "45s", "prompt": "Say hi."}}}`)
	h.drop("l", "2", `{"subject": "silent", "owner": "taskd", "metadata": {"taskd": {"agent": "silent", "cwd": "`+cwd+`", "timeout": "45s", "prompt": "Say hi."}}}`)
	for _, tt := range []struct {
		id   string
		want []string
	}{
		{"1", []string{"timed out after 45s; the agent's last error: no answer from the API (a connection error", "Claude Code was retrying ("}},
		{"2", []string{"timed out after 45s; the agent was waiting for its model's answer: the API did not answer"}},
	} {
		tf := h.waitState("l", tt.id, task.TimedOut, 2*time.Minute)
		e, _ := tf.Metadata.Object("taskd").String("error")
		for _, w := range tt.want {
			if !strings.Contains(e, w) {
				t.Errorf("task %s: error %q, want %q", tt.id, e, w)
			}
		}
	}
	if len(silent.Bodies()) == 0 {
		t.Errorf("the silent stub was never asked: task 2 did not reach it")
	}
}
