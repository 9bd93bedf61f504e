// Package children is the tree of tasks: a parent's children as files
// with metadata.taskd.parent, recorded in the parent's
// metadata.taskd.children collections (queued, parallel, sequential,
// done); pushing and starting them within the configured depth and width;
// each task's inbox, a maildir its children's results and other tasks'
// messages arrive in; and the results a waiting parent is given. It works
// on the files only: the daemon decides when a parent goes on.
package children

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/catalog"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Child collections of a parent, in metadata.taskd.children:
//
//	queued      pushed, not started (waiting for /run or taskd run)
//	parallel    started together; the parent waits for all of them
//	sequential  run one after another in order; the parent waits for all
//	done        children whose results the parent has been given
//	returns     not children: the steps of the task's own return chain
//	            (siblings, made once its agent succeeded); it waits for
//	            them, its outcome theirs, and is never given their results
//
// A parent waits only for its own parallel and sequential children (and
// its return chain), so trees of any depth (up to the configured
// maxDepth) resume level by level.
const (
	Queued     = "queued"
	Parallel   = "parallel"
	Sequential = "sequential"
	Done       = "done"
	Returns    = "returns"
)

// PushOptions describe a child to queue.
type PushOptions struct {
	Name       string        // unique among the parent's children; generated if empty
	Prompt     string        // the child's prompt (slash lines processed when it starts)
	Model      string        // override the inherited model
	Agent      string        // override the inherited agent
	Timeout    time.Duration // override the inherited timeout
	Cwd        string        // override the inherited directory (relative: to the parent's)
	Worktree   *bool         // override the inherited worktree setting
	Sequential bool          // run after the parent's earlier sequential children
	Start      bool          // start at once instead of waiting for a run
	BlockedBy  []string      // tasks that must complete before it runs
	// After are names (or ids) of the parent's children (at the top
	// level: of top-level tasks) it runs after: they join BlockedBy.
	After []string
	// State is the child's first state (task.Begin): task.None unless it
	// waits for a run (Queued) or is refused as it is made (Failed).
	State task.State
	// Extra metadata.taskd fields for the child (loop, return, …).
	Extra map[string]any
	// Inherit are fields the child takes from a task other than its parent
	// (a return takes them from the task it follows). Like the fields taken
	// from the parent, a block in the child's own prompt overrides them.
	Inherit map[string]any
	// Subject is the child's subject (else made from its name and prompt).
	Subject string
	// Detached makes a child its parent does not wait for and does not
	// record among its children (a schedule's run): it needs a Name,
	// unique by other means, and does not count toward maxChildren.
	Detached bool
}

// ErrLimit is returned (wrapped) when a child would exceed maxDepth or
// maxChildren.
var ErrLimit = errors.New("limit reached")

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Push creates a child of task parentID in dir: a task file with
// metadata.taskd.parent and name, state queued (or, with Start, ready to
// run), inheriting the parent's agent, model, cwd and permission mode unless
// opt says otherwise, and records it in the parent's children. A parentID of
// "" makes a queued top-level task for the user (taskd retry runs it). A
// name the parent's children have already is refused, unless that child
// has the same prompt: then it is the one returned (pushedBefore). The
// depth of the tree and the parent's number of children are bounded by
// cfg.MaxDepth and cfg.MaxChildren.
func Push(ctx context.Context, cfg *config.Config, dir *taskfile.Dir, parentID string, opt PushOptions) (*taskfile.Task, error) {
	if opt.Name != "" && !namePattern.MatchString(opt.Name) {
		return nil, fmt.Errorf("child name %q: use 1-64 of A-Z a-z 0-9 _ -", opt.Name)
	}
	if strings.TrimSpace(opt.Prompt) == "" {
		return nil, errors.New("a child needs a prompt")
	}
	// Its slash lines run when it starts; a prompt that cannot run is
	// refused now, where the pusher sees why.
	script, err := prompt.Parse(opt.Prompt, prompt.ParseOptions{Commands: catalog.LoadCommands(cfg.Dir, dir.Path()).Has})
	if err != nil {
		return nil, fmt.Errorf("child prompt: %w", err)
	}
	blockedBy := slices.Clone(opt.BlockedBy)
	for _, name := range opt.After {
		id, err := runsAfter(dir, parentID, name)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(blockedBy, id) {
			blockedBy = append(blockedBy, id)
		}
	}
	if opt.Detached && (opt.Name == "" || parentID == "") {
		return nil, errors.New("a detached child needs a parent and a name")
	}
	child := &taskfile.Task{Subject: subjectFor(opt), Owner: task.Owner, BlockedBy: blockedBy}
	child.ActiveForm = child.Subject
	m := task.Meta(child)
	m.Set("prompt", opt.Prompt)
	var inheritedKeys []string
	if parentID != "" {
		parent, err := dir.Read(parentID)
		if err != nil {
			return nil, fmt.Errorf("read parent %s: %w", parentID, err)
		}
		if depth := treeDepth(dir, parent); depth+1 > cfg.MaxDepth {
			return nil, fmt.Errorf("%w: task %s is at depth %d; children may go %d levels deep (maxDepth)", ErrLimit, parentID, depth, cfg.MaxDepth)
		}
		ptd := parent.Metadata.Object("taskd")
		var names []string
		if !opt.Detached {
			names = Names(dir, parent)
		}
		if len(names) >= cfg.MaxChildren {
			return nil, fmt.Errorf("%w: task %s already has %d children (maxChildren)", ErrLimit, parentID, len(names))
		}
		var taken map[string]string // a result's name: the child's id
		if !opt.Detached {
			taken = resultNames(dir, parent)
		}
		switch {
		case opt.Detached:
			// named by the caller, uniquely: not looked up among the children
		case opt.Name == "":
			for i := len(names) + 1; ; i++ {
				if n := fmt.Sprintf("child-%d", i); !slices.Contains(names, n) && taken[n] == "" {
					opt.Name = n
					break
				}
			}
		case slices.Contains(names, opt.Name):
			if same, ok := pushedBefore(dir, parentID, opt); ok {
				return same, nil
			}
			return nil, fmt.Errorf("task %s already has a child named %q", parentID, opt.Name)
		}
		// Two children whose results go by one name: $RESULT[name] would
		// name either, and one would silently win. (A parallel item's
		// name, given as Extra, is its task's to check: CheckPrompt; a
		// reference to a name two results share fails.)
		if name := cmp.Or(blockAs(script), opt.Name); opt.Extra["as"] == nil && taken[name] != "" {
			return nil, fmt.Errorf("task %s already has a child whose result goes by %q (task %s): $RESULT[%s] would name either; give the new child another as or name", parentID, name, taken[name], name)
		}
		for _, k := range task.Inherited {
			if v, ok := ptd.Get(k); ok {
				m.Set(k, v)
				inheritedKeys = append(inheritedKeys, k)
			}
		}
		m.Set("parent", parentID)
		m.Set("name", opt.Name)
	} else if opt.Name != "" {
		m.Set("name", opt.Name)
	}
	for _, k := range slices.Sorted(maps.Keys(opt.Inherit)) {
		m.Set(k, opt.Inherit[k])
		if !slices.Contains(inheritedKeys, k) {
			inheritedKeys = append(inheritedKeys, k)
		}
	}
	if opt.Model != "" {
		m.Set("model", opt.Model)
		inheritedKeys = slices.DeleteFunc(inheritedKeys, func(k string) bool { return k == "model" })
	}
	if opt.Agent != "" {
		m.Set("agent", opt.Agent)
		inheritedKeys = slices.DeleteFunc(inheritedKeys, func(k string) bool { return k == "agent" })
	}
	if opt.Cwd != "" {
		cwd := opt.Cwd
		if base, _ := m.String("cwd"); !filepath.IsAbs(cwd) && base != "" {
			cwd = filepath.Join(base, cwd)
		}
		m.Set("cwd", cwd)
		inheritedKeys = slices.DeleteFunc(inheritedKeys, func(k string) bool { return k == "cwd" })
	}
	if opt.Worktree != nil {
		m.Set("worktree", *opt.Worktree)
		inheritedKeys = slices.DeleteFunc(inheritedKeys, func(k string) bool { return k == "worktree" })
	}
	if len(inheritedKeys) > 0 {
		m.Set("inherited", inheritedKeys)
	}
	if opt.Timeout > 0 {
		m.Set("timeout", opt.Timeout.String())
	}
	for _, k := range slices.Sorted(maps.Keys(opt.Extra)) {
		m.Set(k, opt.Extra[k])
	}
	coll, state := Queued, opt.State
	switch {
	case opt.Detached:
		// runs by itself; its parent does not wait for it
	case opt.Sequential && parentID != "":
		coll = Sequential
		if !sequentialIdle(dir, parentID) {
			state = task.Queued // released in order by the daemon
		}
	case opt.Start && parentID != "":
		coll = Parallel
	case opt.Start:
		// a top-level task that runs by itself
	default:
		state = task.Queued
	}
	if err := task.Begin(child, state); err != nil {
		return nil, err
	}
	if err := check(cfg, child); err != nil {
		return nil, fmt.Errorf("the child would be rejected: %w", err)
	}
	created, err := dir.Create(ctx, child)
	if err != nil {
		return nil, err
	}
	if parentID == "" || opt.Detached {
		return created, nil
	}
	_, err = dir.Update(ctx, parentID, func(t *taskfile.Task) error {
		AddChild(t, coll, created.ID)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record child %s in %s: %w", created.ID, parentID, err)
	}
	return created, nil
}

// blockAs is the as a child's prompt gives it in its block, if any.
func blockAs(script *prompt.Script) string {
	for _, st := range script.Leading {
		if sub, ok := st.Cmd.(*prompt.Subtask); ok {
			return sub.Overrides.As
		}
	}
	return ""
}

// resultNames returns, for each name a child of parent's result goes by
// ($RESULT[name]: its as, else its name), that child's id.
func resultNames(dir *taskfile.Dir, parent *taskfile.Task) map[string]string {
	out := map[string]string{}
	ch := task.RecordOf(parent).Children
	for _, coll := range []string{Queued, Parallel, Sequential, Done} {
		for _, id := range task.Strings(ch, coll) {
			if c, err := dir.Read(id); err == nil {
				m := c.Metadata.Object("taskd")
				as, _ := m.String("as")
				n, _ := m.String("name")
				out[cmp.Or(as, n)] = id
			}
		}
	}
	return out
}

// check refuses a child the daemon would reject as it is written: its
// fields (task.ReadSpec), the agent it names (inherited or its own), the
// ids it names and its prompt's NUL bytes, checked as the daemon checks
// a task it accepts. Its parent would otherwise wait for it forever.
func check(cfg *config.Config, child *taskfile.Task) error {
	sp, err := task.ReadSpec(child)
	if err != nil {
		return err
	}
	_, profile := task.Addressed(child)
	if err := cfg.CheckAgents(sp, profile); err != nil {
		return err
	}
	return task.Check(child, "", sp)
}

// pushedBefore returns the child of parentID that a push with opt made
// before: the child of that name, if its prompt is opt's. An agent run
// again after a crash pushes its children again, and gets the same ones,
// never a second of each; a push of another prompt under a name taken is
// refused.
func pushedBefore(dir *taskfile.Dir, parentID string, opt PushOptions) (*taskfile.Task, bool) {
	id, err := Named(dir, parentID, opt.Name)
	if err != nil {
		return nil, false
	}
	c, err := dir.Read(id)
	if err != nil {
		return nil, false
	}
	if p, _ := c.Metadata.Object("taskd").String("prompt"); p != opt.Prompt {
		return nil, false
	}
	return c, true
}

// runsAfter resolves the name of a task a new child of parentID runs
// after: a child of parentID with that name (or id); for a top-level
// task, a top-level task with that name (or id).
func runsAfter(dir *taskfile.Dir, parentID, name string) (string, error) {
	if parentID != "" {
		id, err := Named(dir, parentID, name)
		if err != nil {
			return "", fmt.Errorf("after=%s: task %s has no child named %q; push it first (on an earlier line)", name, parentID, name)
		}
		return id, nil
	}
	ids, _ := dir.List()
	for _, id := range ids {
		t, err := dir.Read(id)
		if err != nil {
			continue
		}
		m := t.Metadata.Object("taskd")
		p, _ := m.String("parent")
		n, _ := m.String("name")
		if p == "" && (n == name || id == name) {
			return id, nil
		}
	}
	return "", fmt.Errorf("after=%s: no top-level task is named %q; push it first (on an earlier line)", name, name)
}

// sequentialIdle reports whether every sequential child of parentID has
// ended, so a new one can start at once.
func sequentialIdle(dir *taskfile.Dir, parentID string) bool {
	parent, err := dir.Read(parentID)
	if err != nil {
		return false
	}
	for _, id := range task.Strings(task.RecordOf(parent).Children, Sequential) {
		if c, err := dir.Read(id); err == nil {
			if s := task.Of(c); !s.Ended() {
				return false
			}
		}
	}
	return true
}

func subjectFor(opt PushOptions) string {
	if opt.Subject != "" {
		return opt.Subject
	}
	first := strings.TrimSpace(opt.Prompt)
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	if r := []rune(first); len(r) > 60 {
		first = string(r[:59]) + "…"
	}
	if opt.Name != "" {
		return opt.Name + ": " + first
	}
	return first
}

// AddChild appends id to collection coll of t's children.
func AddChild(t *taskfile.Task, coll, id string) {
	task.Change(t, func(r *task.Record) {
		ch := childrenOf(r)
		if ids := task.Strings(ch, coll); !slices.Contains(ids, id) {
			ch.Set(coll, append(ids, id))
		}
	})
}

// MoveChild moves id from one collection to another.
func MoveChild(t *taskfile.Task, from, to, id string) {
	task.Change(t, func(r *task.Record) {
		ch := childrenOf(r)
		ids := task.Strings(ch, from)
		if i := slices.Index(ids, id); i >= 0 {
			ch.Set(from, slices.Delete(ids, i, i+1))
		}
	})
	AddChild(t, to, id)
}

// childrenOf returns r's children, made empty if it has none.
func childrenOf(r *task.Record) *taskfile.Object {
	if r.Children == nil {
		r.Children = taskfile.NewObject()
	}
	return r.Children
}

// Names returns the names of every child of parent (all collections).
func Names(dir *taskfile.Dir, parent *taskfile.Task) []string {
	ch := task.RecordOf(parent).Children
	var names []string
	for _, coll := range []string{Queued, Parallel, Sequential, Done} {
		for _, id := range task.Strings(ch, coll) {
			if c, err := dir.Read(id); err == nil {
				if n, ok := c.Metadata.Object("taskd").String("name"); ok {
					names = append(names, n)
				}
			}
		}
	}
	return names
}

// treeDepth is the number of ancestors of t (0 for a top-level task).
func treeDepth(dir *taskfile.Dir, t *taskfile.Task) int {
	depth := 0
	seen := map[string]bool{t.ID: true}
	for p, _ := t.Metadata.Object("taskd").String("parent"); p != "" && !seen[p]; depth++ {
		seen[p] = true
		pt, err := dir.Read(p)
		if err != nil {
			return depth + 1
		}
		p, _ = pt.Metadata.Object("taskd").String("parent")
	}
	return depth
}

// Start starts up to n of parentID's queued children (all when n is
// 0), in the order they were pushed, and returns their ids. They run in
// parallel, within the daemon's concurrency limits.
func Start(ctx context.Context, dir *taskfile.Dir, parentID string, n int) ([]string, error) {
	parent, err := dir.Read(parentID)
	if err != nil {
		return nil, err
	}
	queued := task.Strings(task.RecordOf(parent).Children, Queued)
	if n > 0 && len(queued) > n {
		queued = queued[:n]
	}
	var started []string
	for _, id := range queued {
		_, err := dir.Update(ctx, id, func(t *taskfile.Task) error {
			if task.Of(t) == task.Queued {
				_, err := task.Move(t, task.Release)
				return err
			}
			return nil
		})
		if err != nil {
			return started, fmt.Errorf("start child %s: %w", id, err)
		}
		started = append(started, id)
	}
	if len(started) == 0 {
		return nil, nil
	}
	_, err = dir.Update(ctx, parentID, func(t *taskfile.Task) error {
		for _, id := range started {
			MoveChild(t, Queued, Parallel, id)
		}
		return nil
	})
	return started, err
}

// Status is one child as taskd child list shows it.
type Status struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Collection string    `json:"collection"` // queued, parallel, sequential, done
	State      string    `json:"state"`
	Since      time.Time `json:"since"`
	Summary    string    `json:"summary,omitempty"`
	Success    *bool     `json:"success,omitempty"`
}

// List lists the children of parentID with their collection and state.
func List(dir *taskfile.Dir, parentID string) ([]Status, error) {
	parent, err := dir.Read(parentID)
	if err != nil {
		return nil, err
	}
	ch := task.RecordOf(parent).Children
	var out []Status
	for _, coll := range []string{Queued, Parallel, Sequential, Done} {
		for _, id := range task.Strings(ch, coll) {
			cs := Status{ID: id, Collection: coll}
			if c, err := dir.Read(id); err == nil {
				rec := task.RecordOf(c)
				cs.Name, _ = c.Metadata.Object("taskd").String("name")
				cs.State = string(rec.State)
				if cs.Since = task.Since(c); cs.Since.IsZero() {
					if fi, err := os.Stat(dir.File(id)); err == nil {
						cs.Since = fi.ModTime()
					}
				}
				if r := rec.Result; r != nil {
					cs.Summary, _ = r.String("summary")
					if ok, isBool := r.Bool("success"); isBool {
						cs.Success = &ok
					}
				}
			} else {
				cs.State = "missing"
			}
			out = append(out, cs)
		}
	}
	return out, nil
}

// Named finds the child of parentID called name.
func Named(dir *taskfile.Dir, parentID, name string) (string, error) {
	cs, err := List(dir, parentID)
	if err != nil {
		return "", err
	}
	for _, c := range cs {
		if c.Name == name || c.ID == name {
			return c.ID, nil
		}
	}
	return "", fmt.Errorf("task %s has no child named %q", parentID, name)
}

// WaitsFor returns the tasks a parent waits for: metadata.taskd.children
// (parallel and sequential, and the steps of its return chain) and, for
// workflow forks, forkState's branches.
func WaitsFor(t *taskfile.Task) []string {
	var ids []string
	if ch := task.FieldOf(t, func(r *task.Record) **taskfile.Object { return &r.Children }); ch != nil {
		for _, coll := range []string{Parallel, Sequential, Returns} {
			for _, id := range task.Strings(ch, coll) {
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
	}
	if fs := t.Metadata.Object("forkState").Object("branches"); fs != nil {
		for _, name := range fs.Keys() {
			if c, ok := fs.Object(name).String("childTaskId"); ok && !slices.Contains(ids, c) {
				ids = append(ids, c)
			}
		}
	}
	return ids
}
