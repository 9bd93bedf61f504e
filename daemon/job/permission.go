package job

import (
	"context"
	"slices"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// AsksPermission reports whether task t waits for a person's answer to a
// question about the tool calls its agent was refused (askAboutDenials).
func AsksPermission(t *taskfile.Task) bool {
	kind, _ := t.Metadata.Object("taskd").Object("hitl").String("kind")
	return kind == "permission" && task.Of(t) == task.NeedsHuman
}

// AnswerPermission takes a person's answer to such a question
// (metadata.taskd.resolve): allow adds the denied tools to
// metadata.taskd.tools and runs the task again, retry runs it again as
// its file now says, fail fails it, leave keeps it waiting. An answer
// that is not one of these is consumed and the question stays.
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
		h := m.Object("hitl")
		m.Delete("resolve")
		switch answer {
		case AnswerAllow:
			tools := task.Strings(m, "tools")
			for _, d := range task.Strings(h, "denied") {
				if !slices.Contains(tools, d) {
					tools = append(tools, d)
				}
			}
			m.Set("tools", tools)
			fallthrough
		case AnswerRetry:
			if _, err := task.Move(t, task.Restart); err != nil {
				return err
			}
			m.Delete("hitl")
			m.Delete("error")
		case AnswerFail:
			if _, err := task.Move(t, task.Fail); err != nil {
				return err
			}
			m.Set("error", "a person answered fail: "+firstString(h, "reason"))
			m.Set("finishedAt", task.Stamp(j.Now()))
			m.Delete("hitl")
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

func firstString(o *taskfile.Object, key string) string {
	s, _ := o.String(key)
	return s
}
