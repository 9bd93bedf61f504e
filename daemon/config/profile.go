package config

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/task"
)

// A Profile says how to run a prompt: the command, how the prompt reaches
// it, which environment variables it may see, and how to read its output.
type Profile struct {
	Name    string
	Command []string
	Prompt  string // "stdin" or "arg"
	Env     []string
	Timeout time.Duration // 0: the daemon's default
	Output  string        // "claude-stream", "claude-json", "codex-json", "opencode-json", "json" or "text"
	Flags   string        // "claude", "opencode", "codex" or "none"
	// PauseOnLimit: a usage limit pauses the profile's tasks instead of
	// failing them; LimitBackoff and LimitBackoffMax bound the pause
	// when the agent names no reset time.
	PauseOnLimit    bool
	LimitBackoff    time.Duration
	LimitBackoffMax time.Duration
	// MaxTurns and MaxCostUSD bound each attempt that neither its task
	// nor its list bounds (0: no bound).
	MaxTurns   int
	MaxCostUSD float64
}

// The default bounds of a usage limit's pause when the agent names no
// reset time: it doubles from the first to the last.
const (
	DefaultLimitBackoff    = time.Minute
	DefaultLimitBackoffMax = time.Hour
)

// claudeEnv are the variables the claude profile passes through: its
// credentials, endpoint and settings.
var claudeEnv = []string{"ANTHROPIC_*", "CLAUDE_*", "DISABLE_*", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "NODE_EXTRA_CA_CERTS", "AWS_*", "GOOGLE_*", "CLOUD_ML_REGION", "VERTEX_*"}

// builtinProfiles are the profiles of docs/configuration.md. The configuration file
// can override any of them by name.
var builtinProfiles = map[string]ProfileSpec{
	"claude":   {Command: []string{"claude", "-p", "--output-format", "stream-json", "--verbose"}, Prompt: "stdin", Output: "claude-stream", Env: claudeEnv},
	"opencode": {Command: []string{"opencode", "run", "--format", "json"}, Prompt: "arg", Output: "opencode-json", Env: []string{"OPENCODE_*", "ANTHROPIC_*", "OPENAI_*", "OPENROUTER_*", "GEMINI_*", "GOOGLE_*", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"}},
	"codex":    {Command: []string{"codex", "exec", "--json"}, Prompt: "arg", Output: "codex-json", Env: []string{"CODEX_*", "OPENAI_*", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"}},
	"exec":     {Command: []string{"sh", "-c"}, Prompt: "arg", Output: "text", Flags: "none"},
}

// profiles merges the built-in profiles with the file's (the file wins).
func (fc *FileConfig) profiles() map[string]ProfileSpec {
	out := maps.Clone(builtinProfiles)
	maps.Copy(out, fc.Profiles)
	return out
}

func (p ProfileSpec) validate() error {
	if len(p.Command) == 0 || p.Command[0] == "" {
		return errors.New(`"command" must name the program to run, such as ["claude", "-p"]`)
	}
	switch p.Prompt {
	case "", "stdin", "arg":
	default:
		return fmt.Errorf(`"prompt" is %q, want "stdin" or "arg"`, p.Prompt)
	}
	switch p.Output {
	case "", "claude-stream", "claude-json", "codex-json", "opencode-json", "json", "text":
	default:
		return fmt.Errorf(`"output" is %q, want "claude-stream", "claude-json", "codex-json", "opencode-json", "json" or "text"`, p.Output)
	}
	if err := p.validateRuns(); err != nil {
		return err
	}
	switch p.Flags {
	case "", "claude", "opencode", "codex", "none":
	default:
		return fmt.Errorf(`"flags" is %q, want "claude", "opencode", "codex" or "none"`, p.Flags)
	}
	for _, e := range p.Env {
		name, _, set := strings.Cut(e, "=")
		if !set {
			name = strings.TrimSuffix(name, "*")
		}
		if !envName.MatchString(name) {
			return fmt.Errorf(`"env" entry %q is not NAME, PREFIX* or NAME=value`, e)
		}
		if set && (name == "PATH" || strings.HasPrefix(name, "TASKD_")) {
			return fmt.Errorf(`"env" entry %q sets a variable taskd sets itself`, e)
		}
	}
	if p.Timeout != "" {
		if d, err := time.ParseDuration(p.Timeout); err != nil || d <= 0 {
			return fmt.Errorf(`"timeout" %q is not a positive duration such as "10m"`, p.Timeout)
		}
	}
	return nil
}

func (p ProfileSpec) compile(name string) (*Profile, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("profile %q: %w", name, err)
	}
	out := &Profile{
		Name:    name,
		Command: slices.Clone(p.Command),
		Prompt:  p.Prompt,
		Env:     slices.Clone(p.Env),
		Output:  p.Output,
		Flags:   p.Flags,
	}
	if out.Prompt == "" {
		out.Prompt = "stdin"
	}
	if out.Output == "" {
		out.Output = "text"
	}
	if out.Flags == "" {
		switch filepath.Base(p.Command[0]) {
		case "claude", "opencode", "codex":
			out.Flags = filepath.Base(p.Command[0])
		default:
			out.Flags = "none"
		}
	}
	if p.Timeout != "" {
		out.Timeout, _ = time.ParseDuration(p.Timeout)
	}
	p.compileRuns(out)
	return out, nil
}

// ErrUnknownAgent is returned (wrapped) for an agent name that is neither a
// profile nor mapped to one.
var ErrUnknownAgent = errors.New("unknown agent")

// CheckAgents checks that the agent a task names (sp.Agent) and the
// profile its owner names ("taskd:PROFILE") both exist, as the daemon
// requires of a task it accepts: a typo in either is reported, though the
// agent wins.
func (c *Config) CheckAgents(sp task.Spec, ownerProfile string) error {
	for _, name := range []string{sp.Agent, ownerProfile} {
		if name != "" {
			if _, err := c.ResolveAgent(name, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// ResolveAgent finds the profile for an agent name. explicit says the name
// was chosen for this task (metadata.taskd.agent or owner "taskd:<name>"):
// it must then be a profile or a mapped agent. Workflow agent names
// (Developer, ns:Name, …) that are not mapped fall back to the default agent;
// so do the agent types of subagents (builder, tester, …), even explicit.
// An empty name is the default agent.
func (c *Config) ResolveAgent(name string, explicit bool) (*Profile, error) {
	if name == "" {
		name = c.DefaultAgent
	}
	for range 4 { // agent → agent mappings, bounded
		if p, ok := c.Profiles[name]; ok {
			return p, nil
		}
		mapped, ok := c.Agents[name]
		if !ok {
			break
		}
		name = mapped
	}
	if explicit && !IsAgentType(name) { // an unmapped agent type runs the default agent
		return nil, fmt.Errorf("%w %q: name a profile (%s) or map the agent to one in %s under \"agents\"",
			ErrUnknownAgent, name, strings.Join(slices.Sorted(maps.Keys(c.Profiles)), ", "), c.FileName())
	}
	if p, ok := c.Profiles[c.DefaultAgent]; ok {
		return p, nil
	}
	if mapped, ok := c.Agents[c.DefaultAgent]; ok {
		if p, ok := c.Profiles[mapped]; ok {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w %q and no usable defaultAgent", ErrUnknownAgent, name)
}

func (c *Config) FileName() string {
	if c.ConfigPath != "" {
		return c.ConfigPath
	}
	return "the configuration file"
}

// envName is the form of an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
