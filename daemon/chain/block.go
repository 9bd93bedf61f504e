// Package chain is what a plain task asks for beyond one run of its agent,
// written as fields of metadata.taskd (or as a /subtask block or a command
// file's frontmatter, compiled into them when the task is claimed): a loop
// that runs it again until a judge, a command or its count says it is done;
// a return chain of follow-up tasks run one after another once it
// succeeds; parallel items run beside it as children; a planner whose
// output becomes such a chain; and $RESULT[name] to use a named task's
// result. docs/prompt-commands.md is the manual.
package chain

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// This file compiles the inline block syntax into fields. The fields of
// metadata.taskd (model, agent, loop, return, parallel, as, auto) are what
// count; a /subtask {…} line or a /command invocation in the prompt is a way
// to write them, compiled into the task file when the task starts.

// overrideKeys are the metadata.taskd fields a block can set.
var overrideKeys = task.BlockKeys

// Plan is what a plain task's prompt asks for beyond its content.
type Plan struct {
	Script   *prompt.Script
	Block    prompt.Overrides // from /subtask or /name (over the command file's frontmatter)
	HasBlock bool             // the prompt has a /subtask line or invokes a command file
	Content  string           // what the agent is given: the script's content, or the command's body
}

// PlanOf parses the prompt of a plain task with spec sp: its script, the
// overrides of a /subtask line or of a command file it invokes (merged
// with the invocation's block), and the effective content. It reads the
// list's command files, through j's catalog.
func PlanOf(j job.Scope, sp task.Spec) (*Plan, error) {
	l := j.List
	text := sp.Text()
	p := &Plan{}
	if !prompt.HasCommands(text) {
		p.Script = &prompt.Script{Content: strings.TrimSpace(text)}
		p.Content = p.Script.Content
		return p, nil
	}
	script, err := j.ParsePrompt(text)
	if err != nil {
		return nil, fmt.Errorf("prompt: %w", err)
	}
	p.Script, p.Content = script, script.Content
	for _, st := range script.Leading {
		switch c := st.Cmd.(type) {
		case *prompt.Subtask:
			p.Block, p.HasBlock = c.Overrides, true
		case *prompt.Invoke:
			cf, err := j.Catalog.Commands(l.Dir.Path()).Get(c.Name)
			if err != nil || cf == nil {
				return nil, fmt.Errorf("prompt line %d: /%s: %v", st.Line, c.Name, errOr(err, "no such command file"))
			}
			inv, err := cf.Invoke(c.Overrides, c.Args)
			if err != nil {
				return nil, fmt.Errorf("prompt line %d: %w", st.Line, err)
			}
			p.Block, p.HasBlock = inv.Overrides, true
			body := inv.Body
			if strings.TrimSpace(script.Content) != "" {
				body += "\n\n" + script.Content
			}
			p.Content = body
		}
	}
	return p, nil
}

func errOr(err error, msg string) string {
	if err != nil {
		return err.Error()
	}
	return msg
}

// CheckBlock reports a block that disagrees with fields already in the task
// file (sp.Block), or names an agent taskd does not know.
func CheckBlock(cfg *config.Config, sp task.Spec, p *Plan) error {
	if !p.HasBlock {
		return nil
	}
	for k, v := range p.Block.Fields() {
		if slices.Contains(sp.Inherited, k) {
			continue // taken from another task: the block overrides it
		}
		if cur, ok := sp.Block[k]; ok && cur != nil && !sameValue(cur, v) {
			return fmt.Errorf("metadata.taskd.%s and the prompt's block disagree; keep one of them", k)
		}
	}
	if p.Block.Agent != "" {
		if _, err := cfg.ResolveAgent(p.Block.Agent, true); err != nil {
			return fmt.Errorf("prompt block agent: %w", err)
		}
	}
	return nil
}

// CompileBlock writes the block's settings into metadata.taskd (inside the
// task's claim), where they are what the daemon acts on from then on.
func CompileBlock(t *taskfile.Task, p *Plan) {
	if !p.HasBlock {
		return
	}
	m := task.Meta(t)
	fields := p.Block.Fields()
	inh := task.Strings(m, "inherited")
	for _, k := range overrideKeys {
		if v, ok := fields[k]; ok {
			if cur, set := m.Get(k); !set || cur == nil || slices.Contains(inh, k) {
				m.Set(k, v)
				inh = slices.DeleteFunc(inh, func(s string) bool { return s == k })
			}
		}
	}
	if len(inh) > 0 {
		m.Set("inherited", inh)
	} else {
		m.Delete("inherited")
	}
}

// sameValue compares a value from a task file with a Go value by their JSON
// meaning.
func sameValue(fromFile, v any) bool {
	a, err1 := json.Marshal(toPlain(fromFile))
	b, err2 := json.Marshal(v)
	if err1 != nil || err2 != nil {
		return false
	}
	var x, y any
	json.Unmarshal(a, &x)
	json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}

// toPlain converts task-file values (*taskfile.Object, json.Number) into
// values encoding/json understands.
func toPlain(v any) any {
	switch v := v.(type) {
	case *taskfile.Object:
		m := make(map[string]any, v.Len())
		for _, k := range v.Keys() {
			e, _ := v.Get(k)
			m[k] = toPlain(e)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = toPlain(e)
		}
		return out
	default:
		return v
	}
}

// Overrides reads a task's chain settings (loop, return, parallel, …) from its fields.
func Overrides(t *taskfile.Task) (prompt.Overrides, error) {
	m := t.Metadata.Object("taskd")
	fields := map[string]any{}
	for _, k := range overrideKeys {
		if v, ok := m.Get(k); ok {
			fields[k] = v
		}
	}
	return overridesFrom(fields)
}

// OverridesOf is Overrides of the fields spec sp read (sp.Block).
func OverridesOf(sp task.Spec) (prompt.Overrides, error) { return overridesFrom(sp.Block) }

// overridesFrom reads chain settings from the fields of a task file.
func overridesFrom(block map[string]any) (prompt.Overrides, error) {
	fields := make(map[string]any, len(block))
	for k, v := range block {
		fields[k] = toPlain(v)
	}
	return prompt.OverridesFromFields(fields)
}
