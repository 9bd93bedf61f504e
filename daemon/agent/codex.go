package agent

import (
	"time"

	"github.com/taskd/taskd/daemon/config"
)

// The codex kind: OpenAI's codex exec. A task's model becomes --model; its
// output is a stream of JSON lines (codex-json, codexstream.go); taskd
// does not continue its sessions.

func init() { Register(codexKind{}) }

// OutputCodexJSON is the codex kind's output format.
const OutputCodexJSON = "codex-json" // codex exec --json

type codexKind struct{}

func (codexKind) Config() config.Kind {
	return config.Kind{Name: "codex", Programs: []string{"codex"}, Model: true,
		Profiles: map[string]config.ProfileSpec{
			"codex": {Command: []string{"codex", "exec", "--json"}, Prompt: "arg", Output: OutputCodexJSON, Env: []string{"CODEX_*", "OPENAI_*", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"}},
		}}
}

func (codexKind) Formats() []Format { return []Format{{Name: OutputCodexJSON, Line: parseCodexLine}} }

func (codexKind) Args(argv []string, a *Attempt) []string {
	if a.Spec.Model != "" {
		argv = append(argv, "--model", a.Spec.Model)
	}
	return endOptions(argv, a)
}

func (codexKind) BoundsTurns() bool { return false }

func (codexKind) Sessions() Sessions { return nil }

func (codexKind) Limit(st *Stream, texts []string, now time.Time) *Limit {
	return FindLimit(st, texts, now)
}

func (codexKind) CredentialsFix(docs string) string {
	return "give the service OPENAI_API_KEY (" + docs + "), or log in as this user with 'codex login'"
}
