package daemon

import "context"

// stopCause is why a job with context ctx must not start its agent: ctx's
// cause, or the daemon's stop. The daemon's context learns of a stop
// before any job's does, and the jobs learn of it one after another: a
// job whose agent was stopped first may give its slot to a job not yet
// told, which would start its agent in the middle of the stop.
func (d *Daemon) stopCause(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if d.ctx != nil {
		return context.Cause(d.ctx)
	}
	return nil
}

// kickLoop asks the loop to schedule again, without waiting for it.
func (d *Daemon) kickLoop() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}
