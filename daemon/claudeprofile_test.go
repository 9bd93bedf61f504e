package daemon_test

import (
	"testing"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/internal/claudestub"
)

// textAnswer answers every request with the text reply chooses by its body.
func textAnswer(reply func(body string) string) func(int, string) claudestub.Turn {
	return func(_ int, body string) claudestub.Turn { return claudestub.Turn{Text: reply(body)} }
}

// streamingClaude is the built-in claude profile's command (stream-json)
// with the real CLI, pointed at stub.
func streamingClaude(t *testing.T, bin string, stub *claudestub.Server, extra config.ProfileSpec) map[string]config.ProfileSpec {
	p := extra
	p.Command = []string{bin, "-p", "--output-format", "stream-json", "--verbose"}
	p.Prompt, p.Output = "stdin", "claude-stream"
	p.Env = append(stub.Env(t), p.Env...)
	if p.Timeout == "" {
		p.Timeout = "2m"
	}
	return map[string]config.ProfileSpec{"claude": p}
}
