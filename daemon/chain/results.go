package chain

import (
	"fmt"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// A task's prompt names results with $RESULT[name]. The names it can see,
// nearest first:
//
//  1. its own children: parallel items, pushed children, an auto task's
//     plan;
//  2. for a return task, the children of the tasks before it in its chain,
//     back to the task the chain returns from (metadata.taskd.previous,
//     returnOf): so a return sees the parallel items of the task it follows;
//  3. its siblings: the tasks with the same parent (for a top-level task,
//     the other top-level tasks of its list), the steps of its return
//     chain among them.
//
// A task is named name by metadata.taskd.as (as:NAME, a command file's
// as, or a parallel item's command), or else by metadata.taskd.name
// (/push name=NAME).

// resultScope returns the tasks of task t's $RESULT names, nearest first.
func resultScope(l *job.List, t *taskfile.Task) [][]*taskfile.Task {
	byParent := map[string][]*taskfile.Task{}
	ids, _ := l.Dir.List()
	for _, id := range ids {
		c, err := l.Dir.Read(id)
		if err != nil {
			continue
		}
		p, _ := c.Metadata.Object("taskd").String("parent")
		byParent[p] = append(byParent[p], c)
	}
	m := t.Metadata.Object("taskd")
	scope := [][]*taskfile.Task{byParent[t.ID]}
	returnOf, _ := m.String("returnOf")
	seen := map[string]bool{t.ID: true}
	for prev, _ := m.String("previous"); returnOf != "" && prev != "" && !seen[prev]; {
		seen[prev] = true
		scope = append(scope, byParent[prev])
		if prev == returnOf {
			break
		}
		pt, err := l.Dir.Read(prev)
		if err != nil {
			break
		}
		prev, _ = pt.Metadata.Object("taskd").String("previous")
	}
	parent, _ := m.String("parent")
	return append(scope, byParent[parent])
}

// resultName returns the name task c's result goes by: its as, else its
// name.
func resultName(c *taskfile.Task) string {
	m := c.Metadata.Object("taskd")
	if as, _ := m.String("as"); as != "" {
		return as
	}
	n, _ := m.String("name")
	return n
}

// SubstituteResults replaces $RESULT[name] in the prompt text of task t
// with the final output of the task of that name in t's scope (its agent's
// last text; else its summary). A name no task in scope has, or whose task
// has not succeeded, is an error naming it.
func SubstituteResults(l *job.List, t *taskfile.Task, text string) (string, error) {
	names, err := prompt.ResultNames(text)
	if err != nil || len(names) == 0 {
		return text, err
	}
	wanted := map[string]bool{}
	for _, n := range names {
		wanted[n] = true
	}
	results := map[string]string{}
	pending := map[string]bool{}
	for _, level := range resultScope(l, t) {
		if err := ambiguous(level, t.ID, wanted, results, pending); err != nil {
			return "", err
		}
		for _, c := range level {
			name := resultName(c)
			if _, found := results[name]; name == "" || found || pending[name] || c.ID == t.ID {
				continue
			}
			if task.Of(c) != task.Succeeded {
				pending[name] = true
				continue
			}
			rec := task.RecordOf(c)
			out := ""
			if res, ok := agent.ReadResult(l.RunDir(c.ID, rec.Attempt)); ok {
				out = res.Output
			}
			if out == "" {
				out, _ = rec.Result.String("summary")
			}
			results[name] = out
		}
	}
	return prompt.SubstituteResults(text, func(name string) (string, bool) {
		v, ok := results[name]
		return v, ok && !pending[name]
	})
}

// ambiguous refuses a name the prompt uses ($RESULT[name], wanted) that
// two tasks of one level of its scope go by (a command invoked by two
// parallel items, say), unless a nearer level has answered it: one would
// silently stand for both.
func ambiguous(level []*taskfile.Task, self string, wanted map[string]bool, results map[string]string, pending map[string]bool) error {
	by := map[string]string{}
	for _, c := range level {
		name := resultName(c)
		if c.ID == self || !wanted[name] || pending[name] {
			continue
		}
		if _, found := results[name]; found {
			continue
		}
		if other, dup := by[name]; dup {
			return fmt.Errorf("$RESULT[%s] is ambiguous: tasks %s and %s both go by %s; give each its own as", name, other, c.ID, name)
		}
		by[name] = c.ID
	}
	return nil
}

// ResultWait returns the children of task t whose results its prompt text
// names and that have not ended yet: t's agent must wait for them (its
// parallel items run first when its prompt uses their results).
func ResultWait(l *job.List, t *taskfile.Task, text string) []string {
	names, err := prompt.ResultNames(text)
	if err != nil || len(names) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []string
	for _, c := range resultScope(l, t)[0] {
		if want[resultName(c)] && !task.Of(c).Ended() {
			out = append(out, c.ID)
		}
	}
	return out
}
