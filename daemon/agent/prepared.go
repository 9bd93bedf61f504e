package agent

import (
	"fmt"

	"github.com/taskd/taskd/internal/fsroot"
)

// notPrepared handles an attempt whose run folder could not be written
// for a reason of the file system (fsroot.WriteFailed: a full disk, an I/O
// error, a read-only file system), the error among args: its agent does
// not start, and a.Stopped says why, so that its task is held and tried
// again rather than failed. It returns nil when no such error is there.
func notPrepared(a *Attempt, args []any) *Result {
	for _, arg := range args {
		if err, ok := arg.(error); ok && fsroot.WriteFailed(err) {
			a.Stopped = fmt.Errorf("prepare the run folder of attempt %d: %w", a.N, err)
			return &Result{Success: false, ExitCode: -1, Error: a.Stopped.Error()}
		}
	}
	return nil
}
