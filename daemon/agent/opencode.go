package agent

import (
	"time"

	"github.com/taskd/taskd/daemon/config"
)

// The opencode kind: opencode run. A task's model becomes --model; its
// output is a stream of JSON lines (opencode-json, opencodestream.go);
// taskd does not continue its sessions.

func init() { Register(opencodeKind{}) }

// OutputOpencodeJSON is the opencode kind's output format.
const OutputOpencodeJSON = "opencode-json" // opencode run --format json

type opencodeKind struct{}

func (opencodeKind) Config() config.Kind {
	return config.Kind{Name: "opencode", Programs: []string{"opencode"}, Model: true,
		Profiles: map[string]config.ProfileSpec{
			"opencode": {Command: []string{"opencode", "run", "--format", "json"}, Prompt: "arg", Output: OutputOpencodeJSON, Env: []string{"OPENCODE_*", "ANTHROPIC_*", "OPENAI_*", "OPENROUTER_*", "GEMINI_*", "GOOGLE_*", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"}},
		}}
}

func (opencodeKind) Formats() []Format {
	return []Format{{Name: OutputOpencodeJSON, Line: parseOpencodeLine}}
}

func (opencodeKind) Args(argv []string, a *Attempt) []string {
	if a.Spec.Model != "" {
		argv = append(argv, "--model", a.Spec.Model)
	}
	return endOptions(argv, a)
}

func (opencodeKind) BoundsTurns() bool { return false }

func (opencodeKind) Sessions() Sessions { return nil }

func (opencodeKind) Limit(st *Stream, texts []string, now time.Time) *Limit {
	return FindLimit(st, texts, now)
}

func (opencodeKind) CredentialsFix(docs string) string {
	return "give the service the provider's key (" + docs + "), or log in as this user with 'opencode auth login'"
}
