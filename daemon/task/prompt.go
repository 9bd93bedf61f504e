package task

import "github.com/taskd/taskd/taskfile"

// Prompt returns a task's prompt text: metadata.taskd.prompt, or the
// description.
func Prompt(t *taskfile.Task, sp Spec) string {
	if sp.HasPrompt {
		return sp.Prompt
	}
	return t.Description
}
