package subagent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// A convergence runs over children that have ended (first_success: until
// one has succeeded; the others are then cancelled and waited for). It is
// recorded in the parent's metadata.taskd.converges, logs
// ConvergenceInitiated, a TranscriptEvent for each conflict detected and
// resolved, and ConvergenceComplete with the output written to the run
// folder. Conflicts left for a person log ManualReviewRequired and write
// nothing until a person answers.

// convergeRecord is one entry of metadata.taskd.converges.
type convergeRecord struct {
	Key                string   `json:"key"` // line:N, or cli:<ids>:<strategy>
	Line               int      `json:"line,omitempty"`
	SubagentIDs        []string `json:"subagentIds"`
	Strategy           string   `json:"strategy"`
	ConflictResolution string   `json:"conflictResolution"`
	OutputFormat       string   `json:"outputFormat"`
	State              string   `json:"state"`                 // waiting, needs_human or done
	Resolutions        []string `json:"resolutions,omitempty"` // a person's answers, in order
	Reported           int      `json:"reported,omitempty"`    // conflicts logged so far
	Cancelled          []string `json:"cancelled,omitempty"`
	Output             string   `json:"output,omitempty"` // relative to the list directory
	InitiatedAt        string   `json:"initiatedAt"`
}

// States of a convergence.
const (
	convergeWaiting = "waiting"
	convergeHuman   = "needs_human"
	convergeDone    = "done"
)

func convergesOf(t *taskfile.Task) []convergeRecord {
	return decodeList[convergeRecord](task.RecordOf(t).Converges)
}

// converger runs convergences for one parent.
type converger struct {
	cfg    *config.Config
	dir    *taskfile.Dir
	parent string
	emit   func(eventlog.Event)
	tol    tolerance
}

// convergeChildren resolves the ids or names of a /converge line to child
// ids of parent; none may be queued.
func convergeChildren(dir *taskfile.Dir, parent string, refs []string) ([]string, error) {
	var ids []string
	for _, r := range refs {
		c, err := handoffChild(dir, parent, r)
		if err != nil {
			return nil, err
		}
		if slices.Contains(ids, c.ID) {
			return nil, fmt.Errorf("%s names task %s a second time", r, c.ID)
		}
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// ensure finds or creates the record with key, logging
// ConvergenceInitiated when it is new.
func (cg *converger) ensure(ctx context.Context, key string, line int, ids []string, req *prompt.Converge) (convergeRecord, error) {
	var rec convergeRecord
	created := false
	_, err := cg.dir.Update(ctx, cg.parent, func(t *taskfile.Task) error {
		recs := convergesOf(t)
		for _, r := range recs {
			if r.Key == key {
				rec, created = r, false
				return nil
			}
		}
		rec = convergeRecord{Key: key, Line: line, SubagentIDs: ids, Strategy: req.Strategy,
			ConflictResolution: req.ConflictResolution, OutputFormat: req.OutputFormat,
			State: convergeWaiting, InitiatedAt: task.Stamp(time.Now())}
		created = true
		task.Change(t, func(r *task.Record) { r.Converges = listOf(append(recs, rec)) })
		return nil
	})
	if err == nil && created {
		cg.emit(eventlog.Event{Type: eventlog.ConvergenceInitiated, Task: cg.parent, Data: cg.fields(&rec)})
	}
	if err == nil && comparesAnswers(rec.Strategy) {
		err = markVoters(ctx, cg.dir, ids)
	}
	return rec, err
}

// errMarked skips the write of a child that needs no mark.
var errMarked = errors.New("marked already, or ended")

// markVoters marks the children whose answers a vote or a consensus
// compares (metadata.taskd.answerRequired), those that have not ended:
// a model's answer without one is asked for it (package plain).
func markVoters(ctx context.Context, dir *taskfile.Dir, ids []string) error {
	for _, id := range ids {
		_, err := dir.Update(ctx, id, func(t *taskfile.Task) error {
			m := task.Meta(t)
			if marked, _ := m.Bool("answerRequired"); marked || task.Of(t).Ended() {
				return errMarked
			}
			m.Set("answerRequired", true)
			return nil
		}, taskfile.NoDirSync)
		if err != nil && !errors.Is(err, errMarked) {
			return fmt.Errorf("mark child %s as voted on: %w", id, err)
		}
	}
	return nil
}

// update applies fn to the record with key.
func (cg *converger) update(ctx context.Context, key string, fn func(*convergeRecord)) (convergeRecord, error) {
	var out convergeRecord
	_, err := cg.dir.Update(ctx, cg.parent, func(t *taskfile.Task) error {
		recs := convergesOf(t)
		for i := range recs {
			if recs[i].Key == key {
				fn(&recs[i])
				out = recs[i]
				task.Change(t, func(r *task.Record) { r.Converges = listOf(recs) })
				return nil
			}
		}
		return fmt.Errorf("task %s has no convergence %s", cg.parent, key)
	})
	return out, err
}

func (cg *converger) fields(rec *convergeRecord) map[string]any {
	f := map[string]any{"session_id": cg.parent, "subagent_ids": rec.SubagentIDs, "strategy": rec.Strategy,
		"conflict_resolution": rec.ConflictResolution, "output_format": rec.OutputFormat}
	if rec.Line > 0 {
		f["line"] = rec.Line
	}
	return f
}

// ready reports whether a convergence can run: every child has ended (its
// result delivered), or for first_success one has succeeded.
func ready(strategy string, tasks map[string]*taskfile.Task) bool {
	all := true
	for _, c := range tasks {
		if c == nil {
			continue
		}
		if !childDone(c) {
			all = false
			continue
		}
		if s := task.Of(c); strategy == strategyFirstSuccess && s == task.Succeeded {
			return true
		}
	}
	return all
}

// readTaskMap reads ids (nil for a missing task).
func readTaskMap(dir *taskfile.Dir, ids []string) map[string]*taskfile.Task {
	out := map[string]*taskfile.Task{}
	for _, id := range ids {
		out[id], _ = dir.Read(id)
	}
	return out
}

// cancelRest cancels the children of a first_success convergence that have
// not ended, records them, and waits until every child has ended (at most
// twice the grace period and a margin): their processes are gone then.
func (cg *converger) cancelRest(ctx context.Context, rec *convergeRecord, tasks map[string]*taskfile.Task) error {
	var cancelled []string
	for _, id := range rec.SubagentIDs {
		if c := tasks[id]; c != nil && !task.Of(c).Ended() {
			if _, err := control.CancelTask(ctx, cg.dir, id); err != nil && !strings.Contains(err.Error(), "already ended") {
				return fmt.Errorf("cancel %s: %w", id, err)
			}
			cancelled = append(cancelled, id)
		}
	}
	if len(cancelled) > 0 {
		r, err := cg.update(ctx, rec.Key, func(r *convergeRecord) { r.Cancelled = cancelled })
		if err != nil {
			return err
		}
		*rec = r
	}
	wctx, cancel := stopWait(ctx, cg.cfg)
	defer cancel()
	_, err := waitTasks(wctx, cg.dir, rec.SubagentIDs, func(ts map[string]*taskfile.Task) bool {
		for _, c := range ts {
			if c != nil && !childDone(c) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("wait for the cancelled children %s to stop: %w", strings.Join(cancelled, ", "), err)
	}
	return nil
}

// compute converges the persisted results.
func (cg *converger) compute(rec *convergeRecord) (*converged, error) {
	ins, err := loadInputs(cg.dir, rec.SubagentIDs)
	if err != nil {
		return nil, err
	}
	cv := converge(ins, rec.Strategy, rec.ConflictResolution, cg.tol, rec.Resolutions)
	cv.OutputFormat = rec.OutputFormat
	cv.Cancelled = rec.Cancelled
	return cv, nil
}

// reportConflicts logs a TranscriptEvent for each conflict not logged yet
// and, when resolved is set, for each resolution.
func (cg *converger) reportConflicts(ctx context.Context, rec *convergeRecord, cv *converged, resolved bool) error {
	for i := rec.Reported; i < len(cv.Conflicts); i++ {
		f := cg.fields(rec)
		f["event_type"] = trConflictFound
		f["conflict"] = cv.Conflicts[i]
		cg.emit(eventlog.Event{Type: eventlog.TranscriptEvent, Task: cg.parent, Data: f})
	}
	if resolved {
		for _, r := range cv.Resolutions {
			f := cg.fields(rec)
			f["event_type"] = trConflictSolved
			f["resolution"] = r
			f["conflict"] = cv.Conflicts[r.Conflict]
			cg.emit(eventlog.Event{Type: eventlog.TranscriptEvent, Task: cg.parent, Data: f})
		}
	}
	if len(cv.Conflicts) == rec.Reported {
		return nil
	}
	r, err := cg.update(ctx, rec.Key, func(r *convergeRecord) { r.Reported = len(cv.Conflicts) })
	*rec = r
	return err
}

// needsReview records conflicts left for a person: ManualReviewRequired,
// and the record waits. It returns the question for the person.
func (cg *converger) needsReview(ctx context.Context, rec *convergeRecord, cv *converged, source string) (hitlRecord, error) {
	if err := cg.reportConflicts(ctx, rec, cv, false); err != nil {
		return hitlRecord{}, err
	}
	var open []conflict
	var options []string
	for _, i := range cv.Unresolved {
		open = append(open, cv.Conflicts[i])
		for _, id := range cv.Conflicts[i].Children {
			if !slices.Contains(options, id) {
				options = append(options, id)
			}
		}
	}
	options = append(options, actAbort, "leave")
	f := cg.fields(rec)
	f["conflicts"] = open
	f["conflict_count"] = len(cv.Conflicts)
	f["options"] = options
	cg.emit(eventlog.Event{Type: eventlog.ManualReviewRequired, Task: cg.parent, Data: f})
	if _, err := cg.update(ctx, rec.Key, func(r *convergeRecord) { r.State = convergeHuman }); err != nil {
		return hitlRecord{}, err
	}
	reason := fmt.Sprintf("the %s convergence of tasks %s has %d conflict(s) for you to decide: answer with the id of the task whose result wins, abort, or leave",
		rec.Strategy, strings.Join(rec.SubagentIDs, ", "), len(open))
	return hitlRecord{Kind: "converge", Source: source, Line: rec.Line, Key: rec.Key, Reason: reason,
		Options: options, Conflicts: open}, nil
}

// output writes the converged result to runDir, logs ConvergenceComplete,
// marks the record done and moves the children to the parent's done
// collection.
func (cg *converger) output(ctx context.Context, rec *convergeRecord, cv *converged, runDir string) (string, []byte, error) {
	if err := cg.reportConflicts(ctx, rec, cv, true); err != nil {
		return "", nil, err
	}
	path, content, err := writeConverged(cg.dir.Path(), runDir, cv)
	if err != nil {
		return "", nil, fmt.Errorf("write the converged result: %w", err)
	}
	rel, err := filepath.Rel(cg.dir.Path(), path)
	if err != nil {
		rel = path
	}
	f := cg.fields(rec)
	f["conflict_count"] = len(cv.Conflicts)
	f["resolution_count"] = len(cv.Resolutions)
	f["output_size"] = len(content)
	f["output_path"] = rel
	f["success"] = cv.Success
	if cv.Winner != "" {
		f["winner"] = cv.Winner
	}
	if len(cv.Cancelled) > 0 {
		f["cancelled"] = cv.Cancelled
	}
	cg.emit(eventlog.Event{Type: eventlog.ConvergenceComplete, Task: cg.parent, Data: f})
	if _, err := cg.update(ctx, rec.Key, func(r *convergeRecord) { r.State, r.Output = convergeDone, rel }); err != nil {
		return "", nil, err
	}
	return path, content, moveToDone(ctx, cg.dir, cg.parent, rec.SubagentIDs)
}

// convergedReport is the section a converged result adds to the prompt.
func convergedReport(rec *convergeRecord, path string, content []byte) string {
	return fmt.Sprintf("## Converged result of tasks %s (%s, %s)\n\nAlso in %s.\n\n%s",
		strings.Join(rec.SubagentIDs, ", "), rec.Strategy, rec.OutputFormat, path, agent.Truncate(string(content), 64<<10))
}

// ErrManualReview is returned (wrapped) by Converge when conflicts wait for
// a person.
var ErrManualReview = errors.New("conflicts need a person")
