package daemon

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// This file compiles subtask2's syntax into fields. The fields of
// metadata.taskd (model, agent, loop, return, parallel, as, auto) are what
// count; a /subtask {…} line or a /command invocation in the prompt is a way
// to write them, compiled into the task file when the task starts.

// overrideKeys are the metadata.taskd fields a block can set.
var overrideKeys = []string{"model", "agent", "loop", "return", "parallel", "as", "auto"}

// plan is what a plain task's prompt asks for beyond its content.
type plan struct {
	script  *prompt.Script
	block   prompt.Overrides // from /subtask or /name (over the command file's frontmatter)
	hasBlk  bool             // the prompt has a /subtask line or invokes a command file
	content string           // what the agent is given: the script's content, or the command's body
}

// promptPlan parses a plain task's prompt: its script, the overrides of a
// /subtask line or of a command file it invokes (merged with the
// invocation's block), and the effective content.
func (d *Daemon) promptPlan(l *job.List, t *taskfile.Task, sp task.Spec) (*plan, error) {
	text := taskPrompt(t, sp)
	p := &plan{}
	if !hasSlashLines(text) {
		p.script = &prompt.Script{Content: strings.TrimSpace(text)}
		p.content = p.script.Content
		return p, nil
	}
	script, err := d.parsePrompt(l, text)
	if err != nil {
		return nil, fmt.Errorf("prompt: %w", err)
	}
	p.script, p.content = script, script.Content
	for _, st := range script.Leading {
		switch c := st.Cmd.(type) {
		case *prompt.Subtask:
			p.block, p.hasBlk = c.Overrides, true
		case *prompt.Invoke:
			cf, err := d.catalog.Commands(l.Dir.Path()).Get(c.Name)
			if err != nil || cf == nil {
				return nil, fmt.Errorf("prompt line %d: /%s: %v", st.Line, c.Name, errOr(err, "no such command file"))
			}
			merged, err := prompt.MergeOverrides(cf.Overrides, c.Overrides)
			if err != nil {
				return nil, fmt.Errorf("prompt line %d: %w", st.Line, err)
			}
			p.block, p.hasBlk = merged, true
			body := cf.Expand(c.Args)
			if strings.TrimSpace(script.Content) != "" {
				body += "\n\n" + script.Content
			}
			p.content = body
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

// checkBlock reports a block that disagrees with fields already in the task
// file, or names an agent taskd does not know.
func (d *Daemon) checkBlock(t *taskfile.Task, p *plan) error {
	if !p.hasBlk {
		return nil
	}
	m := t.Metadata.Object("taskd")
	inh := task.Strings(m, "inherited")
	for k, v := range p.block.Fields() {
		if slices.Contains(inh, k) {
			continue // taken from another task: the block overrides it
		}
		if cur, ok := m.Get(k); ok && cur != nil && !sameValue(cur, v) {
			return fmt.Errorf("metadata.taskd.%s and the prompt's block disagree; keep one of them", k)
		}
	}
	if p.block.Agent != "" {
		if _, err := d.cfg.ResolveAgent(p.block.Agent, true); err != nil {
			return fmt.Errorf("prompt block agent: %w", err)
		}
	}
	return nil
}

// compileBlock writes the block's settings into metadata.taskd (inside the
// task's claim), where they are what the daemon acts on from then on.
func compileBlock(t *taskfile.Task, p *plan) {
	if !p.hasBlk {
		return
	}
	m := task.Meta(t)
	fields := p.block.Fields()
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

// taskOverrides reads a task's subtask2 settings from its fields.
func taskOverrides(t *taskfile.Task) (prompt.Overrides, error) {
	m := t.Metadata.Object("taskd")
	fields := map[string]any{}
	for _, k := range overrideKeys {
		if v, ok := m.Get(k); ok {
			fields[k] = toPlain(v)
		}
	}
	return prompt.OverridesFromFields(fields)
}

// resultScope returns the tasks whose $RESULT names a task's prompt can
// use: its siblings (same parent; for a top-level task, the other top-level
// tasks of its list).
func resultScope(l *job.List, parent string) []*taskfile.Task {
	ids, _ := l.Dir.List()
	var out []*taskfile.Task
	for _, id := range ids {
		t, err := l.Dir.Read(id)
		if err != nil {
			continue
		}
		if p, _ := t.Metadata.Object("taskd").String("parent"); p == parent {
			out = append(out, t)
		}
	}
	return out
}

// substituteResults replaces $RESULT[name] in text with the final output of
// the sibling task named name (metadata.taskd.as). A name no sibling has, or
// whose task has not succeeded, is an error naming it.
func substituteResults(l *job.List, parent, text string) (string, error) {
	names, err := prompt.ResultNames(text)
	if err != nil || len(names) == 0 {
		return text, err
	}
	results := map[string]string{}
	pending := map[string]bool{}
	for _, t := range resultScope(l, parent) {
		m := t.Metadata.Object("taskd")
		as, _ := m.String("as")
		if as == "" {
			continue
		}
		if task.Of(t) != task.Succeeded {
			pending[as] = true
			continue
		}
		attempt, _ := m.Int("attempt")
		out := ""
		if res, ok := agent.ReadResult(l.RunDir(t.ID, int(attempt))); ok {
			out = res.Output
		}
		if out == "" {
			out, _ = m.Object("result").String("summary")
		}
		results[as] = out
	}
	return prompt.SubstituteResults(text, func(name string) (string, bool) {
		v, ok := results[name]
		if !ok && pending[name] {
			return "", false
		}
		return v, ok
	})
}
