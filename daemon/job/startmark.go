package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/clock"
	"github.com/taskd/taskd/taskfile"
)

// markDelay is how long after its agent started a task claimed ahead of
// its slot may still read starting: the running mark is made by the job's
// next write of the task, or by a write of its own once markDelay has
// passed on the daemon's clock. An agent that ends sooner (a command of a
// few milliseconds) is never marked running on disk: the write of its end
// moves the task from starting, through running, to its end, in one write.
const markDelay = 250 * time.Millisecond

// A startMark is the running mark a claim made ahead of its slot owes its
// file once the agent has started: state running, status in_progress,
// startedAt when the agent started.
type startMark struct {
	c     *Claim
	at    time.Time
	write clock.Stopper // the mark's own write, markDelay after at
}

// afterFunc calls f once d has passed on the daemon's clock.
func (e *Env) afterFunc(d time.Duration, f func()) clock.Stopper {
	if e.Clock == nil {
		return clock.Real.AfterFunc(d, f)
	}
	return e.Clock.AfterFunc(d, f)
}

// errMarkGone ends the write of a running mark the file no longer needs:
// it does not hold the claim any more (its attempt ended, or another
// writer changed it).
var errMarkGone = errors.New("the claim is no longer in the file")

// StartMarkingLater lets claim c's agent start, now that the job holds
// its slot, as Start does, but marks a claim made ahead of the slot
// running after the agent has started rather than before: the file must
// hold the claim when it is read just before (Check), the claim must be
// durable (Durable: most often another write's fsync has made it so), and
// the mark follows
// in the job's next write of the task, at the latest markDelay after now.
// The claim itself, durable before anything was prepared, is what keeps
// the attempt from starting twice, and a task left starting is recovered
// as a running one is (its agent's result read, or its leftovers killed
// and the attempt run again), so the mark only tells people and Claude
// Code that the agent runs. The agent never waits for a write.
func (j *Job) StartMarkingLater(ctx context.Context, c *Claim) error {
	if err := j.Check(c); err != nil || !c.ahead {
		return err
	}
	err := j.Persist(ctx, fmt.Sprintf("the claim of attempt %d is not on disk yet, and its agent waits for it", c.Spec.Attempt), c.Spec.Parent, func(context.Context) error {
		return j.Durable(c) // no agent starts before its own claim is durable
	})
	if err != nil {
		return err
	}
	m := &startMark{c: c, at: j.Now()}
	j.mark.Store(m)
	// No goroutine waits for the mark's time: the function runs then,
	// unless a write has made the mark before (settleMark stops it). A
	// job whose context ends meanwhile leaves it to run and do nothing.
	write := j.afterFunc(markDelay, func() { j.writeMark(ctx, m) })
	j.markTimer.Lock()
	m.write = write
	j.markTimer.Unlock()
	if j.mark.Load() != m {
		write.Stop() // settled before its write was set
	}
	return nil
}

// apply marks t running if it still holds m's claim.
func (m *startMark) apply(t *taskfile.Task) bool {
	if !m.c.holds(t) {
		return false
	}
	rec := task.RecordOf(t)
	rec.StartedAt = m.at
	_, err := task.Apply(t, task.Start, rec)
	return err == nil
}

// writeMark writes mark m, if the job still owes it, in a write of its
// own, without the directory's fsync (as Start's). A write that fails is
// left to the job's next write.
func (j *Job) writeMark(ctx context.Context, m *startMark) {
	if j.mark.Load() != m || ctx.Err() != nil {
		return
	}
	wctx, cancel := WriteContext(ctx)
	defer cancel()
	_, err := j.update(wctx, func(t *taskfile.Task) error {
		// The update made the mark (apply) if the file still holds the
		// claim; else there is nothing to write.
		if r := task.RecordOf(t); r.State != task.Running || !r.StartedAt.Equal(m.at) {
			return errMarkGone
		}
		return nil
	}, taskfile.NoDirSync)
	if errors.Is(err, errMarkGone) {
		j.settleMark(m)
	}
}

// settleMark forgets mark m: a write made it, or the file no longer needs it.
func (j *Job) settleMark(m *startMark) {
	if j.mark.CompareAndSwap(m, nil) {
		j.markTimer.Lock()
		write := m.write
		j.markTimer.Unlock()
		if write != nil {
			write.Stop()
		}
	}
}

// MarkFollowed marks the task running whose attempt sp.Attempt, sent to a
// worker before a restart that found the task still starting, is
// followed again: its agent runs, and taskd status and Claude Code must
// not show it waiting for a slot. startedAt is when the attempt was found
// again. A file that no longer holds the attempt is left as it is; a
// write that fails is logged and left to the end's write, which records
// the end from starting as well.
func (j *Job) MarkFollowed(ctx context.Context, sp task.Spec) {
	wctx, cancel := WriteContext(ctx)
	defer cancel()
	_, err := j.update(wctx, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		if rec.State != task.Starting || rec.Attempt != sp.Attempt {
			return errMarkGone
		}
		rec.StartedAt = j.Now()
		_, err := task.Apply(t, task.Start, rec)
		return err
	}, taskfile.NoDirSync)
	if err != nil && !errors.Is(err, errMarkGone) {
		j.Log.Warn("mark a followed attempt's task running", "list", j.List.ID, "task", j.ID, "attempt", sp.Attempt, "err", err)
	}
}
