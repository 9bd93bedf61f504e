package chain

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// maxReturnDepth bounds how deeply return items with returns of their own
// are expanded.
const maxReturnDepth = 5

// A retEntry is one task of a materialised return chain.
type retEntry struct {
	prompt string
	// expanded says the entry's own returns are part of the chain already,
	// right after it, so it must not add them again when it succeeds.
	expanded bool
}

// expandReturns turns return items into the chain of tasks that runs them,
// depth first: an item with returns of its own (an inline /subtask {return:
// …} or a /command whose file has a return list) is followed by its
// returns, and only then does the outer chain continue. Identical items are
// separate entries.
func expandReturns(j *job.Job, items []string, depth int) []retEntry {
	var out []retEntry
	for _, item := range items {
		nested := itemReturns(j, item)
		e := retEntry{prompt: item, expanded: len(nested) > 0 && depth < maxReturnDepth}
		out = append(out, e)
		if e.expanded {
			out = append(out, expandReturns(j, nested, depth+1)...)
		}
	}
	return out
}

// itemReturns returns the return items an item sets for itself: an inline
// /subtask's, or those of a command it invokes, with the invocation's
// arguments filled in (prompt.CommandFile.Invoke).
func itemReturns(j *job.Job, item string) []string {
	l := j.List
	script, err := j.ParsePrompt(item)
	if err != nil {
		return nil
	}
	for _, st := range script.Leading {
		switch c := st.Cmd.(type) {
		case *prompt.Subtask:
			return c.Overrides.Return
		case *prompt.Invoke:
			cf, err := j.Catalog.Commands(l.Dir.Path()).Get(c.Name)
			if err != nil || cf == nil {
				return nil
			}
			inv, err := cf.Invoke(c.Overrides, c.Args)
			if err != nil {
				return nil
			}
			return inv.Overrides.Return
		}
	}
	return nil
}

// CreateReturns writes the return chain of task t, whose agent has
// succeeded: one task per entry, each blocked by the one before (the
// first by t, whose waiting for its chain lets it run), so they run in
// order after t, visible in the list and surviving restarts. They are t's
// siblings (children of t's parent, which waits for them too) and take
// t's agent, model and working directory. Each is recorded in t's
// children.returns: t waits for its chain, which is one unit with it — a
// cancel of t reaches the chain, and t's outcome is the chain's
// (ChainOutcome). Entries that exist already (named <t>-r<n>) are not
// created again.
func CreateReturns(ctx context.Context, j *job.Job, t *taskfile.Task, ov prompt.Overrides) error {
	l := j.List
	m := t.Metadata.Object("taskd")
	if expanded, _ := m.Bool("returnsExpanded"); expanded || len(ov.Return) == 0 {
		return nil
	}
	parent, _ := m.String("parent")
	prev := t.ID
	for i, e := range expandReturns(j, ov.Return, 0) {
		name := fmt.Sprintf("%s-r%d", t.ID, i+1)
		id := siblingNamed(j, parent, name)
		if id == "" {
			extra := map[string]any{}
			extra["returnOf"] = t.ID
			extra["previous"] = prev
			if e.expanded {
				extra["returnsExpanded"] = true
			}
			child, err := children.Push(ctx, j.Config, l.Dir, parent, children.PushOptions{Name: name, Prompt: e.prompt, Start: true, BlockedBy: []string{prev}, Extra: extra, Inherit: InheritedFields(m)})
			if err != nil {
				return fmt.Errorf("return %d (%q): %w", i+1, agent.Truncate(e.prompt, 60), err)
			}
			id = child.ID
		}
		if _, err := l.Dir.Update(ctx, t.ID, func(t *taskfile.Task) error {
			children.AddChild(t, children.Returns, id)
			return nil
		}); err != nil {
			return fmt.Errorf("record return %d (task %s): %w", i+1, id, err)
		}
		prev = id
	}
	return nil
}

// ChainOutcome says how the return chain of task t ended, once every step
// of it has: "" if each succeeded, else what became of the first that did
// not (its name, id, state and error). ended is false while a step has
// not ended.
func ChainOutcome(l *job.List, t *taskfile.Task) (failure string, ended bool) {
	for i, id := range task.Strings(task.RecordOf(t).Children, children.Returns) {
		c, err := l.Dir.Read(id)
		if err != nil {
			if failure == "" {
				failure = fmt.Sprintf("step %d of its return chain (task %s) is gone", i+1, id)
			}
			continue
		}
		s := task.Of(c)
		if !s.Ended() {
			return "", false
		}
		if s != task.Succeeded && failure == "" {
			m := c.Metadata.Object("taskd")
			name, _ := m.String("name")
			msg := task.RecordOf(c).Error
			failure = fmt.Sprintf("step %d of its return chain (%s, task %s) %s", i+1, name, id, s)
			if msg != "" {
				failure += ": " + msg
			}
		}
	}
	return failure, true
}

// StartParallel starts a task's parallel items as concurrent children
// (their own returns are ignored) before its agent runs. Each is named for
// $RESULT[name] (itemName). The task waits for them after its agent (or,
// when its prompt uses their results, before it: ResultWait); when they
// have all ended it completes (it is not run again), so its returns fire
// once all are done. A child's failure does not affect its siblings.
func StartParallel(ctx context.Context, j *job.Job, t *taskfile.Task, ov prompt.Overrides) error {
	l := j.List
	for i, item := range ov.Parallel {
		name := fmt.Sprintf("%s-p%d", t.ID, i+1)
		if _, err := children.Named(l.Dir, t.ID, name); err == nil {
			continue
		}
		extra := map[string]any{"parallelItem": true, "returnsExpanded": true}
		if as := ItemName(j, item); as != "" {
			extra["as"] = as
		}
		if _, err := children.Push(ctx, j.Config, l.Dir, t.ID, children.PushOptions{Name: name, Prompt: item, Start: true, Extra: extra}); err != nil {
			return fmt.Errorf("parallel %d (%q): %w", i+1, agent.Truncate(item, 60), err)
		}
	}
	return nil
}

// ItemName is the name of a parallel item's result: its as (ItemAs),
// else the name of the command file it invokes; "" for a prompt (its
// result goes by the child's own name).
func ItemName(j *job.Job, item string) string {
	as, command := itemNames(j.Scope, item)
	return cmp.Or(as, command)
}

// ItemAs is the as a parallel item gives its result: its block's, or that
// of the command file it invokes; "" if it gives none.
func ItemAs(j job.Scope, item string) string {
	as, _ := itemNames(j, item)
	return as
}

// itemNames returns the as an item gives its result and the name of the
// command file it invokes, if any.
func itemNames(j job.Scope, item string) (as, command string) {
	script, err := j.ParsePrompt(item)
	if err != nil {
		return "", ""
	}
	for _, st := range script.Leading {
		switch c := st.Cmd.(type) {
		case *prompt.Subtask:
			return c.Overrides.As, ""
		case *prompt.Invoke:
			cf, err := j.Catalog.Commands(j.List.Dir.Path()).Get(c.Name)
			if err != nil || cf == nil {
				return "", c.Name
			}
			if inv, err := cf.Invoke(c.Overrides, c.Args); err == nil {
				return inv.Overrides.As, c.Name
			}
			return "", c.Name
		}
	}
	return "", ""
}

// InheritedFields copies the fields a follow-up takes from the task it
// follows.
func InheritedFields(m *taskfile.Object) map[string]any {
	out := map[string]any{}
	for _, k := range task.Inherited {
		if v, ok := m.Get(k); ok {
			out[k] = v
		}
	}
	return out
}

// siblingNamed finds the child of parent (or, at the top level, the
// top-level task) called name.
func siblingNamed(j *job.Job, parent, name string) string {
	l := j.List
	if parent != "" {
		id, _ := children.Named(l.Dir, parent, name)
		return id
	}
	ids, _ := l.Dir.List()
	for _, id := range ids {
		t, err := l.Dir.Read(id)
		if err != nil {
			continue
		}
		m := t.Metadata.Object("taskd")
		p, _ := m.String("parent")
		n, _ := m.String("name")
		if p == "" && n == name {
			return id
		}
	}
	return ""
}

// PreviousContext is what a return task is told about the task before it
// in the chain, when it cannot continue that task's agent session.
func PreviousContext(l *job.List, prevID string) string {
	prev, err := l.Dir.Read(prevID)
	if err != nil {
		return ""
	}
	msg := children.ResultMessage(l.Dir, prev)
	var b strings.Builder
	fmt.Fprintf(&b, "## The step before this one (task %s)\n\n", prevID)
	if msg.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n\n", msg.Summary)
	}
	if msg.Output != "" && msg.Output != msg.Summary {
		fmt.Fprintf(&b, "%s\n\n", agent.Truncate(msg.Output, 8<<10))
	}
	return b.String()
}
