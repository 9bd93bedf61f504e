package job

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// AsksPermission reports whether task t waits for a person's answer to a
// question about the tool calls its agent was refused (askAboutDenials).
func AsksPermission(t *taskfile.Task) bool {
	kind, _ := task.RecordOf(t).Hold.String("kind")
	return kind == "permission" && task.Of(t) == task.NeedsHuman
}

// AnswerPermission takes a person's answer to such a question
// (metadata.taskd.resolve): allow adds exactly the refused calls' rules
// (hitl.grant) to metadata.taskd.tools, allow-tool their whole tools
// (hitl.denied), and either runs the task again continuing the refused
// attempt's session (metadata.taskd.grant, GrantOf); retry runs it again
// as its file now says, fail fails it, leave keeps it waiting. An answer
// that is not one of the question's options is consumed and the question
// stays.
func (j *Job) AnswerPermission(ctx context.Context) (*taskfile.Task, error) {
	var sp task.Spec
	var answer string
	t, err := j.List.Dir.Update(ctx, j.ID, func(t *taskfile.Task) error {
		if !AsksPermission(t) {
			return ErrNotRunnable
		}
		s, err := task.ReadSpec(t)
		if err != nil || s.Resolve == "" {
			return ErrNotRunnable
		}
		sp, answer = s, s.Resolve
		m := task.Meta(t)
		rec := task.RecordOf(t)
		h := rec.Hold
		m.Delete("resolve")
		if opts := task.Strings(h, "options"); len(opts) > 0 && !slices.Contains(opts, answer) {
			h.Set("refused", fmt.Sprintf("%q is not an answer here; answer one of: %s", answer, strings.Join(opts, ", ")))
			task.Store(t, rec)
			return nil
		}
		switch answer {
		case AnswerAllow, AnswerAllowTool:
			grant := task.Strings(h, "grant")
			if answer == AnswerAllowTool || len(grant) == 0 { // (a question asked before narrow grants: the tools)
				grant = task.Strings(h, "denied")
			}
			tools := task.Strings(m, "tools")
			for _, g := range grant {
				if !slices.Contains(tools, g) {
					tools = append(tools, g)
				}
			}
			m.Set("tools", tools)
			if session, _ := h.String("session"); session != "" {
				g := taskfile.NewObject()
				g.Set("session", session)
				g.Set("tools", grant)
				rec.Grant = g
			}
			fallthrough
		case AnswerRetry:
			rec.Error, rec.Hold = "", nil
			if _, err := task.Apply(t, task.Restart, rec); err != nil {
				return err
			}
		case AnswerFail:
			rec.Error, rec.FinishedAt = "a person answered fail: "+firstString(h, "reason"), j.Now()
			rec.Hold = nil
			if _, err := task.Apply(t, task.Fail, rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	j.Emit(eventlog.Event{Type: eventlog.HumanResolved, Parent: sp.Parent, Attempt: sp.Attempt, Data: map[string]any{"answer": answer, "kind": "permission"}})
	if answer == AnswerFail {
		j.Emit(eventlog.Event{Type: eventlog.TaskFailed, Parent: sp.Parent, Attempt: sp.Attempt, Data: map[string]any{"error": "a person answered fail"}})
	}
	return t, nil
}

// A Grant is a person's answer allow or allow-tool to refused tool calls
// (metadata.taskd.grant): the rules it added to metadata.taskd.tools, and
// the session of the refused attempt, which the next attempt continues
// (claude: --resume), told that the calls are allowed now, so no work is
// done twice. The end of that attempt removes it.
type Grant struct {
	Session string
	Tools   []string
}

// GrantOf returns task t's grant, if it has one with a session.
func GrantOf(t *taskfile.Task) (Grant, bool) {
	o := task.FieldOf(t, func(r *task.Record) **taskfile.Object { return &r.Grant })
	s, _ := o.String("session")
	return Grant{Session: s, Tools: task.Strings(o, "tools")}, s != ""
}

// Prompt is what the continued session is told.
func (g Grant) Prompt() string {
	return fmt.Sprintf("A person has allowed the tool calls you were refused: %s. Carry on with your task from where you left off: "+
		"make the refused calls again now, do not redo work that is already done, and end your answer as the task asks.", strings.Join(g.Tools, ", "))
}

func firstString(o *taskfile.Object, key string) string {
	s, _ := o.String(key)
	return s
}
