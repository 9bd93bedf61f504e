package subagent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// ConvergeLine runs a /converge prompt line of task t: it suspends t until
// the children have ended (first_success: until one succeeded; the others
// are then cancelled), converges their persisted results, writes the
// output to the run folder of the attempt about to run and adds it to the
// prompt. Conflicts left for a person make t needs_human (kind converge)
// before its agent runs. A pass that runs the line again after the output
// was written reuses that output.
func ConvergeLine(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, line int, c *prompt.Converge, results *[]string) error {
	l := j.List
	tol, err := toleranceOf(t)
	if err != nil {
		return fmt.Errorf("metadata.taskd.convergeTolerance: %w", err)
	}
	cg := &converger{cfg: j.Config, dir: l.Dir, parent: t.ID, emit: l.Emit, tol: tol}
	ids, err := convergeChildren(l.Dir, t.ID, c.IDs)
	if err != nil {
		return err
	}
	rec, err := cg.ensure(ctx, fmt.Sprintf("line:%d", line), line, ids, c)
	if err != nil {
		return err
	}
	if rec.State == convergeDone && rec.Output != "" {
		path := filepath.Join(l.Dir.Path(), rec.Output)
		if content, err := fsroot.ReadRegular(path); err == nil {
			*results = append(*results, convergedReport(&rec, path, content))
			return nil
		}
	}
	tasks := readTaskMap(l.Dir, ids)
	if !ready(rec.Strategy, tasks) {
		return suspend(ctx, j, t, sp, Wait{Kind: "converge", Line: line, Children: ids, Any: rec.Strategy == strategyFirstSuccess})
	}
	if rec.Strategy == strategyFirstSuccess {
		if err := cg.cancelRest(ctx, &rec, tasks); err != nil {
			return err
		}
	}
	cv, err := cg.compute(&rec)
	if err != nil {
		return err
	}
	if len(cv.Unresolved) > 0 {
		h, err := cg.needsReview(ctx, &rec, cv, "line")
		if err != nil {
			return err
		}
		return askPerson(ctx, j, t, sp, h)
	}
	path, content, err := cg.output(ctx, &rec, cv, l.RunDir(t.ID, sp.Attempt))
	if err != nil {
		return err
	}
	logResolutions(j, t.ID, cv)
	*results = append(*results, convergedReport(&rec, path, content))
	return nil
}

// logResolutions logs the results that auto resolution overrode.
func logResolutions(j *job.Job, id string, cv *converged) {
	l := j.List
	for _, r := range cv.Resolutions {
		if r.Method != resolveManual {
			j.Log.Info("convergence conflict resolved", "list", l.ID, "task", id, "method", r.Method,
				"winner", r.Winner, "overridden", r.Overridden)
		}
	}
}

// ConvergeOptions are the choices of Converge beyond the /converge line.
type ConvergeOptions struct {
	// Tolerance for numeric answers ("0.01", "1%"); empty: the parent's
	// metadata.taskd.convergeTolerance.
	Tolerance string
}

// ConvergeOutput is what Converge produced.
type ConvergeOutput struct {
	Path       string `json:"path"` // the output file of the requested format ("" with conflicts left)
	Success    bool   `json:"success"`
	Conflicts  int    `json:"conflicts"`
	Unresolved int    `json:"unresolved"`
	Content    []byte `json:"-"` // the output; with conflicts left, the conflicts as JSON
}

// Converge converges children of task parentID in dir, as taskd converge
// does while parentID's agent runs: it waits (waking on file events) until
// the children have ended (first_success: until one has succeeded, then it
// cancels the others and waits for them to stop), converges their
// persisted results and writes the output to runDir (the parent's current
// run folder). When conflicts are left for a person it writes nothing,
// logs ManualReviewRequired, leaves a verdict in runDir that makes the
// parent needs_human when its agent exits, and returns an error wrapping
// ErrManualReview. A person's answer runs the parent again; the same
// convergence then uses it. ctx ending stops the wait.
func Converge(ctx context.Context, cfg *config.Config, dir *taskfile.Dir, parentID, runDir string, req *prompt.Converge, opt ConvergeOptions) (*ConvergeOutput, error) {
	parent, err := dir.Read(parentID)
	if err != nil {
		return nil, err
	}
	tol, err := toleranceOf(parent)
	if opt.Tolerance != "" {
		tol, err = parseTolerance(opt.Tolerance)
	}
	if err != nil {
		return nil, err
	}
	cg := &converger{cfg: cfg, dir: dir, parent: parentID, emit: func(ev eventlog.Event) { AppendEvent(dir.Path(), ev) }, tol: tol}
	ids, err := convergeChildren(dir, parentID, req.IDs)
	if err != nil {
		return nil, err
	}
	key := "cli:" + strings.Join(ids, ",") + ":" + req.Strategy
	rec, err := cg.ensure(ctx, key, 0, ids, req)
	if err != nil {
		return nil, err
	}
	tasks, err := waitTasks(ctx, dir, ids, func(ts map[string]*taskfile.Task) bool { return ready(rec.Strategy, ts) })
	if err != nil {
		return nil, err
	}
	if rec.Strategy == strategyFirstSuccess {
		if err := cg.cancelRest(ctx, &rec, tasks); err != nil {
			return nil, err
		}
	}
	cv, err := cg.compute(&rec)
	if err != nil {
		return nil, err
	}
	out := &ConvergeOutput{Success: cv.Success, Conflicts: len(cv.Conflicts), Unresolved: len(cv.Unresolved)}
	if len(cv.Unresolved) > 0 {
		h, err := cg.needsReview(ctx, &rec, cv, "command")
		if err != nil {
			return nil, err
		}
		v := verdict{Action: verdictNeedsHuman, Kind: "converge", Reason: h.Reason, Key: rec.Key, Options: h.Options, Conflicts: h.Conflicts}
		if err := writeVerdict(runDir, v); err != nil {
			return nil, err
		}
		out.Content, _ = json.MarshalIndent(h.Conflicts, "", "  ")
		return out, fmt.Errorf("%w: %s", ErrManualReview, h.Reason)
	}
	if runDir == "" {
		return nil, fmt.Errorf("no run folder for the output ($TASKD_RUN_DIR is not set)")
	}
	out.Path, out.Content, err = cg.output(ctx, &rec, cv, runDir)
	return out, err
}
