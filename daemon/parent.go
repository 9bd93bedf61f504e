package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// outstanding returns the parallel and sequential children of t that have
// not ended. The caller may be inside an Update of t: only child files are
// read.
func outstanding(dir *taskfile.Dir, t *taskfile.Task) []string {
	ch := t.Metadata.Object("taskd").Object("children")
	var out []string
	for _, coll := range []string{collParallel, collSequential} {
		for _, id := range task.Strings(ch, coll) {
			c, err := dir.Read(id)
			if err != nil {
				continue // a child that is gone (or broken) is not waited for
			}
			if s := task.Of(c); !s.Ended() {
				out = append(out, id)
			}
		}
	}
	return out
}

// deliverResult sends an ended child's result to its parent's inbox (once:
// the message is keyed by child and attempt, and the child is marked
// delivered afterwards), then releases the parent's next sequential child.
func (d *Daemon) deliverResult(ctx context.Context, j *job) (*taskfile.Task, error) {
	l, id := j.l, j.id
	t, err := l.dir.Read(id)
	if err != nil {
		return nil, err
	}
	m := t.Metadata.Object("taskd")
	parent, _ := m.String("parent")
	state := task.Of(t)
	if delivered, _ := m.Bool("delivered"); parent == "" || delivered || !state.Ended() {
		return nil, errNotRunnable
	}
	msg := childMessage(l, t)
	attempt, _ := m.Int("attempt")
	if err := InboxOf(l.dir.Path(), parent).Deliver(msg, fmt.Sprintf("result-%s-%d", id, attempt)); err != nil {
		return nil, fmt.Errorf("deliver the result of %s to %s: %w", id, parent, err)
	}
	l.events.Append(eventlog.Event{Type: eventlog.MessageDelivered, List: l.id, Task: parent, Data: map[string]any{"from": id, "name": msg.Name, "success": *msg.Success}})
	d.subagentEnded(ctx, l, t) // subagent and handoff events, before delivered is set (aceend.go)
	t, err = l.dir.Update(ctx, id, func(t *taskfile.Task) error {
		task.Meta(t).Set("delivered", true)
		markEndReported(t) // aceend.go
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := d.releaseSequential(ctx, l, parent); err != nil {
		d.log.Warn("release the next sequential child", "list", l.id, "task", parent, "err", err)
	}
	return t, nil
}

// childMessage is the inbox message for an ended child.
func childMessage(l *list, t *taskfile.Task) Message {
	m := t.Metadata.Object("taskd")
	state := task.Of(t)
	ok := state == task.Succeeded
	msg := Message{From: t.ID, TaskID: t.ID, Success: &ok}
	msg.Name, _ = m.String("name")
	msg.Summary, _ = m.Object("result").String("summary")
	if !ok {
		msg.Error, _ = m.String("error")
	}
	attempt, _ := m.Int("attempt")
	if res, found := agent.ReadResult(l.runDir(t.ID, int(attempt))); found {
		msg.Output = agent.Truncate(res.Output, 64<<10)
	}
	if !ok && msg.Output == "" {
		data, _ := agent.ReadTail(l.dir.Path(), filepath.Join(l.runDir(t.ID, int(attempt)), "stdout.log"), 16<<10)
		msg.PartialOutput = string(data)
	}
	return msg
}

// releaseSequential starts the first of parentID's sequential children that
// has not run, if every one before it has ended.
func (d *Daemon) releaseSequential(ctx context.Context, l *list, parentID string) error {
	parent, err := l.dir.Read(parentID)
	if err != nil {
		return err
	}
	for _, id := range task.Strings(parent.Metadata.Object("taskd").Object("children"), collSequential) {
		c, err := l.dir.Read(id)
		if err != nil {
			continue
		}
		s := task.Of(c)
		if s.Ended() {
			continue
		}
		if s != task.Queued {
			return nil // the current one still runs
		}
		_, err = l.dir.Update(ctx, id, func(t *taskfile.Task) error {
			if task.Of(t) == task.Queued {
				_, err := task.Move(t, task.Release)
				return err
			}
			return nil
		})
		return err
	}
	return nil
}

// resumeChildren continues a parent whose children have all ended: a new
// attempt whose prompt carries the children's results in order (for the
// claude profile, the first attempt's session is resumed and the prompt is
// the results alone). The children move to the parent's done collection.
func (d *Daemon) resumeChildren(ctx context.Context, l *list, id string) (*taskfile.Task, error) {
	var kids []string
	t, sp, err := d.claim(ctx, l, id, func(t *taskfile.Task, s task.Spec) bool {
		if s.State != task.Waiting || len(outstanding(l.dir, t)) > 0 {
			return false
		}
		ch := t.Metadata.Object("taskd").Object("children")
		kids = append(task.Strings(ch, collParallel), task.Strings(ch, collSequential)...)
		for _, k := range kids {
			for _, coll := range []string{collParallel, collSequential} {
				if slices.Contains(task.Strings(ch, coll), k) {
					moveChild(t, coll, collDone, k)
				}
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if !wantsResume(l, kids) {
		// Only parallel items, a plan or return chains ran: the task's own
		// agent has done its part; it completes now, its returns next.
		// The claim numbered a new attempt that does not run: go back to
		// the last one, whose result stands.
		sp.Attempt--
		if _, err := l.dir.Update(ctx, id, func(t *taskfile.Task) error {
			m := task.Meta(t)
			m.Set("attempt", sp.Attempt)
			m.Set("runDir", area.RelRunDir(id, sp.Attempt))
			return nil
		}, taskfile.NoDirSync); err != nil {
			return nil, err
		}
		res, _ := agent.ReadResult(l.runDir(id, sp.Attempt))
		res.Success = true
		return d.afterAttempt(ctx, l, id, sp, res, agent.Finished)
	}
	l.events.Append(eventlog.Event{Type: eventlog.TaskResumed, List: l.id, Task: id, Parent: sp.Parent, Attempt: sp.Attempt,
		Data: map[string]any{"children": kids}})
	a, err := d.newAttempt(l, t, sp, "", "")
	if err != nil {
		return d.finish(ctx, l, id, sp, agent.Result{Error: err.Error(), Summary: err.Error(), ExitCode: -1}, agent.NotStarted)
	}
	if pl, err := d.promptPlan(l, t, sp); err == nil {
		a.Prompt = pl.content // the leading commands ran in the first attempt
		if a.Profile.Flags == "none" {
			a.Script = pl.content
		}
	}
	results := resultsText(l, kids)
	session, _ := t.Metadata.Object("taskd").Object("result").String("sessionId")
	if a.Profile.Flags == "claude" && session != "" {
		a.Resume = session
		a.Prompt = results
	} else {
		// An exec agent runs its script again (a.script); the results are in
		// prompt.md and in $TASKD_RESULTS.
		a.Prompt = strings.TrimSpace(a.Prompt) + "\n\n" + results
	}
	a.Env = map[string]string{"TASKD_RESULTS": results}
	res, out := d.run(ctx, a)
	return d.afterAttempt(ctx, l, id, sp, res, out)
}

// wantsResume reports whether any of a parent's ended children was started
// by the parent's agent (/push, taskd push, a delegation), whose results it
// must be given in a new attempt. Parallel items, an auto plan and return
// chains are part of the task's own definition and need no new attempt.
func wantsResume(l *list, kids []string) bool {
	for _, k := range kids {
		c, err := l.dir.Read(k)
		if err != nil {
			continue
		}
		m := c.Metadata.Object("taskd")
		item, _ := m.Bool("parallelItem")
		ret, _ := m.String("returnOf")
		if !item && ret == "" {
			return true
		}
	}
	return false
}

// resultsText renders children's results for a resumed parent.
func resultsText(l *list, ids []string) string {
	var b strings.Builder
	b.WriteString("## Results of your child tasks\n\nAll the child tasks you started have finished. Their results, in order:\n")
	for _, id := range ids {
		c, err := l.dir.Read(id)
		if err != nil {
			fmt.Fprintf(&b, "\n### #%s: missing\n\nThe task file is gone.\n", id)
			continue
		}
		msg := childMessage(l, c)
		verdict := "succeeded"
		if !*msg.Success {
			verdict = "failed"
		}
		name := msg.Name
		if name == "" {
			name = "#" + id
		}
		fmt.Fprintf(&b, "\n### %s (task %s): %s\n\n", name, id, verdict)
		writeResult(&b, msg)
	}
	b.WriteString("\nContinue with your task using these results.\n")
	return b.String()
}

// writeResult renders a child's result for its parent's prompt: its
// summary, error and output (truncated; left out when it is the summary).
func writeResult(b *strings.Builder, msg Message) {
	if msg.Summary != "" {
		fmt.Fprintf(b, "Summary: %s\n\n", msg.Summary)
	}
	if msg.Error != "" {
		fmt.Fprintf(b, "Error: %s\n\n", msg.Error)
	}
	if msg.Output != "" && msg.Output != msg.Summary {
		fmt.Fprintf(b, "Output:\n\n%s\n", agent.Truncate(msg.Output, 8<<10))
	}
}
