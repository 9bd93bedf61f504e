package children

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Ungiven returns the children of t it must wait for before it ends: its
// parallel and sequential children (a resumption moves them to done) that
// have not ended, and those that have ended whose results it is to be
// given and has not been given otherwise: taken from its inbox by its
// agent (taskd receive, check), or through a handoff or convergence it
// waited on (givenByWaits). A
// task whose agent succeeds with any waits, and is resumed with their
// results once all have ended, whether they ended before its agent did or
// after. (Its parallel items and return steps are waited for, never
// given.) A child that is gone is not waited for. The caller may be
// inside an Update of t: only child files and the inbox are read.
func Ungiven(dir *taskfile.Dir, t *taskfile.Task) []string {
	ch := task.FieldOf(t, func(r *task.Record) **taskfile.Object { return &r.Children })
	var out []string
	var read []Message
	var given map[string]bool
	readDone := false
	for _, coll := range []string{Parallel, Sequential, Returns} {
		for _, id := range task.Strings(ch, coll) {
			c, err := dir.Read(id)
			if err != nil {
				continue
			}
			if !task.Of(c).Ended() {
				out = append(out, id)
				continue
			}
			if coll == Returns {
				continue // waited for, never given
			}
			m := c.Metadata.Object("taskd")
			item, _ := m.Bool("parallelItem")
			ret, _ := m.String("returnOf")
			if item || ret != "" {
				continue
			}
			if !readDone {
				read, _ = InboxOf(dir.Path(), t.ID).Consumed()
				given = givenByWaits(t)
				readDone = true
			}
			if !given[id] && !slices.ContainsFunc(read, func(msg Message) bool { return msg.TaskID == id && msg.Success != nil }) {
				out = append(out, id)
			}
		}
	}
	return out
}

// givenByWaits returns the children whose results t's agent was given by
// a wait of its own: a transfer-control handoff that is resolved, and a
// convergence that is done. Package subagent keeps their records on t
// (metadata.taskd.handoffs, metadata.taskd.converges); only the fields
// read here matter.
func givenByWaits(t *taskfile.Task) map[string]bool {
	rec := task.RecordOf(t)
	given := map[string]bool{}
	var handoffs []struct{ Child, Mode, State string }
	if v := rec.Handoffs; v != nil && json.Unmarshal(taskfile.AppendJSON(nil, v), &handoffs) == nil {
		for _, h := range handoffs {
			if h.Mode == "transfer-control" && h.State == "resolved" {
				given[h.Child] = true
			}
		}
	}
	var converges []struct {
		SubagentIDs []string `json:"subagentIds"`
		State       string
	}
	if v := rec.Converges; v != nil && json.Unmarshal(taskfile.AppendJSON(nil, v), &converges) == nil {
		for _, c := range converges {
			for _, id := range c.SubagentIDs {
				given[id] = given[id] || c.State == "done"
			}
		}
	}
	return given
}

// Outstanding returns the parallel and sequential children of t, and the
// steps of its return chain, that have not ended. The caller may be inside an Update of t: only child files are
// read.
func Outstanding(dir *taskfile.Dir, t *taskfile.Task) []string {
	ch := task.RecordOf(t).Children
	var out []string
	for _, coll := range []string{Parallel, Sequential, Returns} {
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

// ResultMessage is the inbox message for an ended child.
func ResultMessage(dir *taskfile.Dir, t *taskfile.Task) Message {
	m := t.Metadata.Object("taskd")
	rec := task.RecordOf(t)
	ok := rec.State == task.Succeeded
	msg := Message{From: t.ID, TaskID: t.ID, Success: &ok}
	msg.Name, _ = m.String("name")
	msg.Summary, _ = rec.Result.String("summary")
	if !ok {
		msg.Error = rec.Error
	}
	if res, found := agent.ReadResult(area.RunDir(dir.Path(), t.ID, rec.Attempt)); found {
		msg.Output = agent.Truncate(res.Output, 64<<10)
	}
	if !ok && msg.Output == "" {
		data, _ := agent.ReadTail(dir.Path(), filepath.Join(area.RunDir(dir.Path(), t.ID, rec.Attempt), "stdout.log"), 16<<10)
		msg.PartialOutput = string(data)
	}
	return msg
}

// ReleaseNext starts the first of parentID's sequential children that
// has not run, if every one before it has ended.
func ReleaseNext(ctx context.Context, dir *taskfile.Dir, parentID string) error {
	parent, err := dir.Read(parentID)
	if err != nil {
		return err
	}
	for _, id := range task.Strings(task.RecordOf(parent).Children, Sequential) {
		c, err := dir.Read(id)
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
		_, err = dir.Update(ctx, id, func(t *taskfile.Task) error {
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

// ResultsText renders children's results for a resumed parent, ended
// with the default follow-up.
func ResultsText(dir *taskfile.Dir, ids []string) string {
	return ResultsWith(dir, ids, DefaultFollowUp)
}

// DefaultFollowUp is the instruction that ends a resumed parent's prompt
// when neither the task nor the configuration gives one (FollowUp).
const DefaultFollowUp = "Review, challenge and verify these results before you rely on them: check each against what you asked for, and look for what is missing or wrong. Then continue with your task."

// FollowUp is the instruction that ends the prompt of parent, resumed with
// its children's results: the task's metadata.taskd.genericReturn, else
// the configuration's genericReturn, else DefaultFollowUp.
func FollowUp(cfg *config.Config, parent *taskfile.Task) string {
	if s, _ := parent.Metadata.Object("taskd").String("genericReturn"); strings.TrimSpace(s) != "" {
		return strings.TrimSpace(s)
	}
	if cfg != nil && cfg.GenericReturn != "" {
		return cfg.GenericReturn
	}
	return DefaultFollowUp
}

// ResultsWith renders children's results for a resumed parent, ended with
// followUp.
func ResultsWith(dir *taskfile.Dir, ids []string, followUp string) string {
	var b strings.Builder
	b.WriteString("## Results of your child tasks\n\nAll the child tasks you started have finished. Their results, in order:\n")
	for _, id := range ids {
		c, err := dir.Read(id)
		if err != nil {
			fmt.Fprintf(&b, "\n### #%s: missing\n\nThe task file is gone.\n", id)
			continue
		}
		msg := ResultMessage(dir, c)
		verdict := "succeeded"
		if !*msg.Success {
			verdict = "failed"
		}
		name := msg.Name
		if name == "" {
			name = "#" + id
		}
		fmt.Fprintf(&b, "\n### %s (task %s): %s\n\n", name, id, verdict)
		WriteResult(&b, msg)
	}
	b.WriteString("\n" + followUp + "\n")
	return b.String()
}

// WriteResult renders a child's result for its parent's prompt: its
// summary, error and output (truncated; left out when it is the summary).
func WriteResult(b *strings.Builder, msg Message) {
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
