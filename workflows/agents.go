package workflows

import (
	"embed"
	"path"
	"strings"
)

// The agent templates are Claude Code subagent definitions (Markdown with
// a frontmatter) for the agents the built-in workflows name, so that a
// session that walks a built-in workflow with flow's /flow:run can
// delegate each step to its agent. The MCP server's CopyAgents copies
// them into a project's .claude/agents.
//
//go:embed agents/*.md
var agentFS embed.FS

// An Agent is one agent template.
type Agent struct {
	ID          string // the file name without ".md"
	Name        string // the frontmatter's name: what a workflow's agent field says
	Description string
	Model       string
	Data        []byte // the whole file
}

// Agents returns the agent templates, by id.
func Agents() []Agent {
	entries, err := agentFS.ReadDir("agents")
	if err != nil {
		panic("workflows: embedded agents missing: " + err.Error()) // a build error
	}
	var out []Agent
	for _, e := range entries {
		data, err := agentFS.ReadFile(path.Join("agents", e.Name()))
		if err != nil {
			panic("workflows: embedded agent unreadable: " + err.Error())
		}
		a := Agent{ID: strings.TrimSuffix(e.Name(), ".md"), Data: data}
		fm := Frontmatter(string(data))
		a.Name, a.Description, a.Model = fm["name"], fm["description"], fm["model"]
		out = append(out, a)
	}
	return out
}

// Frontmatter returns the "key: value" lines of the frontmatter that opens
// a Markdown file ("---" lines around them), or nil when it has none.
func Frontmatter(text string) map[string]string {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil
	}
	block, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return nil
	}
	out := map[string]string{}
	for line := range strings.Lines(block) {
		k, v, ok := strings.Cut(line, ":")
		if k, v = strings.TrimSpace(k), strings.TrimSpace(v); ok && k != "" && v != "" {
			out[k] = v
		}
	}
	return out
}
