package remote

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
)

// Reattach implements job.Reattacher: after a restart, it follows the
// remote attempt recorded in runDir's cmd.json to its end, as Run
// follows it: still queued, claimed by a worker (cmd.json or the Start
// says which, or a worker's heartbeat lists it), ended meanwhile (its End
// is in the runs stream), or unknown to the server — never published
// (the daemon died first) or lost with the server's store — and then
// published again from the copy cmd.json (or work.json) keeps. ok is
// false for an attempt that ran on this machine.
func (c *Coordinator) Reattach(ctx context.Context, listDir, runDir string, onFollow func()) (agent.Result, agent.Outcome, bool) {
	id, subject := remoteID(listDir, runDir)
	if id == "" {
		return agent.Result{}, agent.Finished, false
	}
	start := time.Now()
	taskID, attempt, _ := runDirParts(listDir, runDir)
	f, err := openFolder(listDir, runDir, (&agent.Attempt{}).OutputLimit(c.cfg))
	if err != nil {
		msg := "interrupted: its run folder cannot be read: " + err.Error()
		return agent.Result{Error: msg, Summary: msg, ExitCode: -1}, agent.Interrupted, true
	}
	defer f.close()
	work, err := f.loadWork()
	if err != nil {
		// Sent by a taskd that kept no copy, and lost: it runs again.
		c.log.Info("an attempt sent to a worker cannot be sent again: its run folder keeps no copy; recording it as interrupted", "task", taskID, "attempt", id, "err", err)
		msg := "interrupted: the attempt cannot be followed or sent again (" + err.Error() + ")"
		r, out := c.settleAt(runDir, f, start, ending{agent.Result{Error: msg, Summary: msg, ExitCode: -1}, agent.Interrupted, id})
		return r, out, true
	}
	done := c.follow(id)
	defer done()
	entered, _ := f.cmdKey("entered")
	n := &note{listDir: listDir, task: taskID, attempt: attempt, entered: entered == true, log: c.log}
	defer n.clear()
	if c.streamsFor(ctx, n) == nil {
		return detachedEnding().res, agent.Interrupted, true
	}
	var w Work
	_ = json.Unmarshal(work.Data, &w)
	fl := &following{id: id, subject: subject, profile: w.Profile, labels: w.Labels, f: f, n: n, work: work}
	if h, ok := f.holding(); ok {
		fl.held, fl.saved = &h, true
	}
	c.log.Info("following an attempt sent to a worker before the daemon restarted", "task", taskID, "attempt", id)
	if onFollow != nil {
		onFollow()
	}
	stopWatch := c.watchFolder(f, w.Profile)
	res, out := c.await(ctx, fl)
	stopWatch()
	r, out := c.settleAt(runDir, f, start, ending{res, out, id})
	return r, out, true
}

// watchFolder is watch for a run folder followed after a restart: its
// transcript is written again from the whole stdout.log.
func (c *Coordinator) watchFolder(f *folder, profile string) (stop func()) {
	p := c.cfg.Profiles[profile]
	if p == nil {
		return func() {}
	}
	a := &agent.Attempt{ListDir: f.base, Profile: p}
	a.TaskID, a.N, a.Sub = runDirParts(f.base, f.dir)
	return c.watch(a, f)
}

// settleAt is settle for the attempt whose run folder is runDir.
func (c *Coordinator) settleAt(runDir string, f *folder, start time.Time, e ending) (agent.Result, agent.Outcome) {
	a := &agent.Attempt{ListDir: f.base}
	a.TaskID, a.N, a.Sub = runDirParts(f.base, runDir)
	return c.settle(a, f, start, e)
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
