package task

import (
	"fmt"
	"regexp"
)

// Labels say what a worker has (taskd worker --label gpu) and what a task
// needs of the worker that runs its agent (metadata.taskd.labels): a task
// runs only on a worker that has every label it names.

var labelRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// MaxLabels bounds the labels of a worker and of a task.
const MaxLabels = 8

// ValidLabel reports whether l can be a label: 1 to 32 lower-case
// letters, digits and dashes, not starting with a dash.
func ValidLabel(l string) bool { return labelRE.MatchString(l) }

// CheckLabels checks a list of labels, saying what is wrong.
func CheckLabels(labels []string) error {
	if len(labels) > MaxLabels {
		return fmt.Errorf("%d labels, at most %d", len(labels), MaxLabels)
	}
	for _, l := range labels {
		if !ValidLabel(l) {
			return fmt.Errorf("label %q: a label is 1 to 32 lower-case letters, digits and dashes, not starting with a dash", l)
		}
	}
	return nil
}
