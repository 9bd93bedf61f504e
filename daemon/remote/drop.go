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
// its file says it runs.
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
	if rid, _ := remoteID(listDir, runDir); rid != id {
		return false
	}
	if _, done := agent.ReadResult(runDir); done {
		return false
	}
	t, err := taskfile.ReadFile(filepath.Join(listDir, e.Task+".json"))
	return err == nil && task.Of(t) == task.Running
}
