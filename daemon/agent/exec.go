package agent

import (
	"time"

	"github.com/taskd/taskd/daemon/config"
)

// The kind of a program that runs no model (flags "none"): a shell
// command, a script, any program no other kind names. Its exit status is
// its result; a task's fields give it no flags; it gets its prompt's
// content alone (Attempt.Script); its usage limits fail its tasks unless
// its profile says "onLimit": "pause".

func init() { Register(programKind{}) }

// ShellProfile is the built-in profile that runs a shell command: a
// workflow step's command, a loop's untilCommand.
const ShellProfile = "exec"

type programKind struct{}

func (programKind) Config() config.Kind {
	return config.Kind{Name: "none", Other: true,
		Profiles: map[string]config.ProfileSpec{
			ShellProfile: {Command: []string{"sh", "-c"}, Prompt: "arg", Output: "text", Flags: "none"},
		}}
}

func (programKind) Formats() []Format { return nil }

func (programKind) Args(argv []string, a *Attempt) []string { return argv }

func (programKind) BoundsTurns() bool { return false }

func (programKind) Sessions() Sessions { return nil }

func (programKind) Limit(st *Stream, texts []string, now time.Time) *Limit {
	return FindLimit(st, texts, now)
}

func (programKind) CredentialsFix(docs string) string {
	return "give the service the agent's credentials, and name them in the profile's \"env\" (" + docs + ")"
}
