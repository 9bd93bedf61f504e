package task

import (
	"fmt"
	"slices"

	"github.com/taskd/taskd/taskfile"
)

// A claim whose agent never started is taken back (Withdraw) in one of two
// ways, both through this table: the file's bytes before the claim are put
// back whole, when the file still holds the claim's bytes (CheckUndo says
// whether the table allows it); or, when the job wrote to the file since,
// the claim's fields are put back in the record (Unclaim).

// CheckUndo reports whether putting back before, the file as it was
// before a claim, over claimed, the file the claim wrote, is a move the
// table allows: claimed is claimed (Withdraw applies to it) and before is
// a state a claim may be made from. It returns a *TransitionError
// (ErrIllegal) otherwise.
func CheckUndo(claimed, before *taskfile.Task) error {
	from, to := Of(claimed), Of(before)
	if _, _, err := Next(from, Withdraw); err != nil {
		return fmt.Errorf("task %s: %w", claimed.ID, err)
	}
	if !slices.Contains(rules[Claim].from, to) {
		return fmt.Errorf("task %s: a claim cannot be taken back to %s: %w", claimed.ID, to, ErrIllegal)
	}
	return nil
}

// Unclaim takes back, in task t, the claim made over before (the record
// the task had before it): the state moves by Withdraw, and the fields the
// claim set — attempt, startedAt, runDir, retryAt, finishedAt — are as
// before. The record's other fields, which the job may have written since,
// stay.
func Unclaim(t *taskfile.Task, before Record) (Effects, error) {
	rec := RecordOf(t)
	rec.Attempt, rec.StartedAt, rec.RunDir = before.Attempt, before.StartedAt, before.RunDir
	rec.RetryAt, rec.FinishedAt = before.RetryAt, before.FinishedAt
	return Apply(t, Withdraw, rec)
}
