package remote

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// watchEnds looks at every End workers publish (signed by a trusted key),
// until ctx ends, and drops
// (with a log line, and from the runs stream) those of attempts no task
// expects any more: the task moved on (its attempt was cancelled here and
// its worker answered too late, it was recorded interrupted, its file was
// removed). An End of an attempt being followed, or recently followed to
// its end, is the follower's; one whose task still runs that attempt
// (recovery will follow it) is left alone.
func (c *Coordinator) watchEnds(ctx context.Context) {
	ends := make(chan *nats.Msg, 256)
	sub, err := c.nc.ChanSubscribe(c.prefix+".run.*."+KindEnd, ends)
	if err != nil {
		c.log.Warn("cannot watch for results no task expects", "err", err)
		return
	}
	defer sub.Unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-ends:
			id := strings.TrimSuffix(strings.TrimPrefix(m.Subject, c.prefix+".run."), "."+KindEnd)
			if c.followed(id) {
				continue
			}
			if _, err := c.trust.Verify(m.Subject, m.Header, m.Data); err != nil {
				c.log.Debug("ignoring an end", "subject", m.Subject, "err", err)
				continue
			}
			var e End
			if json.Unmarshal(m.Data, &e) != nil || c.expected(id, e) {
				continue
			}
			c.log.Warn("dropping a result no task expects any more", "list", e.List, "task", e.Task, "attempt", e.N, "remote", id, "worker", e.Worker, "outcome", e.Outcome)
			if err := c.streams.Forget(ctx, id); err != nil {
				c.log.Debug("forget a dropped attempt", "attempt", id, "err", err)
			}
		}
	}
}

// expected reports whether a task of this daemon still runs attempt id, as
// End e names it: its run folder records id and holds no result yet, and
// its file says it runs that attempt (holdsAttempt). A task left starting
// by a restart, its attempt published before the running mark was
// written, is one: its recovery follows the attempt, and finds the End in
// the runs stream only if it is not forgotten here.
func (c *Coordinator) expected(id string, e End) bool {
	if fsroot.CheckName(e.List) != nil || !taskfile.ValidID(e.Task) || e.N <= 0 {
		return false
	}
	listDir := filepath.Join(c.cfg.Root, e.List)
	runDir := area.RunDir(listDir, e.Task, e.N)
	if e.Sub != "" {
		if fsroot.CheckName(e.Sub) != nil {
			return false
		}
		runDir = filepath.Join(runDir, e.Sub)
	}
	rid, _, entered := remoteCmd(listDir, runDir)
	if rid != id {
		return false
	}
	if _, done := agent.ReadResult(runDir); done {
		return false
	}
	t, err := taskfile.ReadFile(filepath.Join(listDir, e.Task+".json"))
	return err == nil && holdsAttempt(t, e.N, entered)
}

// holdsAttempt reports whether task file t says that the task's attempt
// n, sent to a worker, may still go on: the task runs; or it is starting
// attempt n — claimed ahead of its slot, its running mark comes with the
// job's next write, which a restart may have come before — and the
// attempt's cmd.json says it passed its gate (entered), as its recovery
// reads it to follow the attempt rather than take the claim back.
func holdsAttempt(t *taskfile.Task, n int, entered bool) bool {
	r := task.RecordOf(t)
	switch r.State {
	case task.Running:
		return true
	case task.Starting:
		return entered && r.Attempt == n
	}
	return false
}
