package navigator

import (
	"strconv"
	"strings"
)

// write builds the write-through for an advance as flow writes it: without a task
// file there is nothing to write.
func (n *nav) write(resp *Response, mode WriteMode) *WriteThrough {
	t := n.task
	if t == nil {
		return nil
	}
	w := &WriteThrough{Mode: mode, ID: t.Stem, Metadata: resp.Metadata.Fields()}
	if id, ok := t.ID.(string); !t.HasID || !ok || id != t.Stem {
		w.IDWarning = `[Navigator] WARNING: task.id "` + idText(t.ID, t.HasID) + `" does not match filename "` + t.Stem + `.json" — auto-correcting`
	}
	if mode != WriteFull {
		return w
	}
	w.Subject = Subject(t.Stem, n.userDesc, resp)
	w.ActiveForm = ActiveForm(resp)
	if resp.OrchestratorInstructions != "" {
		w.Description, w.SetDescription = resp.OrchestratorInstructions, true
	}
	return w
}

// StartWriteThrough returns what an orchestrator records when it creates a
// task for a workflow it just started, as flow's /flow:run protocol does
// with TaskCreate after a Start-mode Navigate (which itself writes
// nothing): metadata {userDescription, workflowType, currentStep,
// retryCount: 0}, the two-line subject, the activeForm and, for a work
// step, the orchestrator instructions as the description. description is
// the user's description; when empty, the task's userDescription is kept.
// It is not part of Navigate: callers opt in to it.
func StartWriteThrough(task *Task, resp *Response, description string) *WriteThrough {
	if task == nil || resp == nil {
		return nil
	}
	if description == "" {
		description = text(task.Metadata["userDescription"])
	}
	w := &WriteThrough{Mode: WriteFull, ID: task.Stem}
	if description != "" {
		w.Metadata = append(w.Metadata, Field{"userDescription", description})
	}
	w.Metadata = append(w.Metadata, Field{"workflowType", resp.Metadata.WorkflowType},
		Field{"currentStep", resp.Metadata.CurrentStep}, Field{"retryCount", 0})
	w.Subject = Subject(task.Stem, description, resp)
	w.ActiveForm = ActiveForm(resp)
	if resp.OrchestratorInstructions != "" {
		w.Description, w.SetDescription = resp.OrchestratorInstructions, true
	}
	return w
}

// emoji is flow's subject decoration, chosen by workflow id.
var emoji = map[string]string{
	"feature-development":  "✨",
	"bug-fix":              "🐛",
	"bug-hunt":             "🔍",
	"agile-task":           "📋",
	"context-optimization": "🔧",
	"quick-task":           "⚡",
	"ui-reconstruction":    "🎨",
	"test-coverage":        "🧪",
}

// Subject renders a task's two-line subject after a navigation:
//
//	#<stem> <userDescription>[ <emoji>]
//	→ <workflowType> · <step> (<agent>|direct)[ · retries: <n>/<max>]
//
// with "completed ✓" for success ends and "<step> · HITL" for the others.
func Subject(stem, userDescription string, resp *Response) string {
	var b strings.Builder
	b.Grow(64 + len(stem) + len(userDescription) + 2*len(resp.Metadata.WorkflowType) + len(resp.Metadata.CurrentStep) + len(resp.Subagent))
	b.WriteString("#")
	b.WriteString(stem)
	b.WriteString(" ")
	b.WriteString(userDescription)
	wt := resp.Metadata.WorkflowType
	if e := emoji[wt]; e != "" {
		b.WriteString(" ")
		b.WriteString(e)
	}
	b.WriteString("\n→ ")
	b.WriteString(wt)
	b.WriteString(" · ")
	switch resp.Terminal {
	case TerminalSuccess:
		b.WriteString("completed ✓")
	case TerminalHITL, TerminalFailure:
		b.WriteString(resp.Metadata.CurrentStep)
		b.WriteString(" · HITL")
	default:
		b.WriteString(resp.Metadata.CurrentStep)
		b.WriteString(" (")
		if resp.Subagent != "" {
			b.WriteString(resp.Subagent)
		} else {
			b.WriteString("direct")
		}
		b.WriteString(")")
		if resp.MaxRetries > 0 {
			b.WriteString(" · retries: ")
			b.WriteString(strconv.Itoa(resp.Metadata.RetryCount))
			b.WriteString("/")
			b.WriteString(strconv.Itoa(resp.MaxRetries))
		}
	}
	return b.String()
}

// ActiveForm renders the spinner text of a task after a navigation.
func ActiveForm(resp *Response) string {
	switch resp.Terminal {
	case TerminalSuccess:
		return "Completed"
	case TerminalHITL, TerminalFailure:
		return "HITL - Needs human help"
	}
	name := resp.CurrentStep
	if resp.StepInstructions != nil && resp.StepInstructions.Name != "" {
		name = resp.StepInstructions.Name
	}
	if resp.Subagent != "" {
		return name + " (" + resp.Subagent + ")"
	}
	return name
}
