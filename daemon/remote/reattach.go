package remote

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
)

// Reattach implements job.Reattacher: after a restart, it finds out what
// became of the remote attempt recorded in runDir's cmd.json. Its work
// still in the work stream means a worker has it or will take it; an End
// in the runs stream means it ended (perhaps while the daemon was down).
// Either way it is followed to its end, as Run follows it. Neither means
// it never reached the server, or its record expired: it was interrupted.
// ok is false for an attempt that ran on this machine.
func (c *Coordinator) Reattach(ctx context.Context, listDir, runDir string) (agent.Result, agent.Outcome, bool) {
	id, subject := remoteID(listDir, runDir)
	if id == "" {
		return agent.Result{}, agent.Finished, false
	}
	start := time.Now()
	a := &agent.Attempt{ListDir: listDir, TaskID: taskOfRunDir(listDir, runDir)}
	f, err := openFolder(listDir, runDir, a.OutputLimit(c.cfg))
	if err != nil {
		msg := "interrupted: its run folder cannot be read: " + err.Error()
		return agent.Result{Error: msg, Summary: msg, ExitCode: -1}, agent.Interrupted, true
	}
	defer f.close()
	done := c.follow(id)
	defer done()
	n := &note{listDir: listDir, task: a.TaskID, log: c.log}
	defer n.clear()
	s := c.streamsFor(ctx, n)
	if s == nil {
		return detachedEnding().res, agent.Interrupted, true
	}
	known, err := s.known(ctx, id, subject)
	for err != nil {
		n.waiting("waiting for the NATS server to say what became of the attempt: " + err.Error())
		select {
		case <-ctx.Done():
			return detachedEnding().res, agent.Interrupted, true
		case <-time.After(time.Second):
		}
		known, err = s.known(ctx, id, subject)
	}
	if !known {
		c.log.Info("an attempt sent to a worker is known to no stream; recording it as interrupted", "task", a.TaskID, "attempt", id)
		res := agent.Result{Error: errNotSent.Error(), Summary: errNotSent.Error(), ExitCode: -1}
		r, out := c.settleAt(runDir, f, start, ending{res, agent.Interrupted, id})
		return r, out, true
	}
	c.log.Info("following an attempt a worker has, sent before the daemon restarted", "task", a.TaskID, "attempt", id)
	res, out := c.await(ctx, nil, f, id, n)
	r, out := c.settleAt(runDir, f, start, ending{res, out, id})
	return r, out, true
}

// settleAt is settle for the attempt whose run folder is runDir.
func (c *Coordinator) settleAt(runDir string, f *folder, start time.Time, e ending) (agent.Result, agent.Outcome) {
	a := &agent.Attempt{ListDir: f.base}
	a.TaskID, a.N, a.Sub = runDirParts(f.base, runDir)
	return c.settle(a, f, start, e)
}

// known reports whether the streams know attempt id: its work is waiting
// or being worked on, or its End is stored. The work is looked at first:
// a worker stores the End before it acknowledges the work.
func (s *Streams) known(ctx context.Context, id, subject string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := s.Work.GetLastMsgForSubject(ctx, subject)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, err
	}
	end, err := s.Last(ctx, id, KindEnd)
	return end != nil, err
}

// taskOfRunDir is the task whose run folder runDir is.
func taskOfRunDir(listDir, runDir string) string {
	id, _, _ := runDirParts(listDir, runDir)
	return id
}

// runDirParts splits runDir, listDir/.taskd/runs/<task>/<n>[/<sub>], into
// its task, attempt number and sub-folder.
func runDirParts(listDir, runDir string) (task string, n int, sub string) {
	rel, err := filepath.Rel(area.RunsDir(listDir, ""), runDir)
	if err != nil {
		return "", 0, ""
	}
	parts := strings.SplitN(filepath.ToSlash(rel), "/", 3)
	if len(parts) >= 2 {
		task = parts[0]
		for _, r := range parts[1] {
			if r < '0' || r > '9' {
				return task, 0, ""
			}
			n = n*10 + int(r-'0')
		}
	}
	if len(parts) == 3 {
		sub = parts[2]
	}
	return task, n, sub
}
