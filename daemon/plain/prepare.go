package plain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/chain"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/readable"
	"github.com/taskd/taskd/taskfile"
)

// maxReadSize bounds what /read injects into a prompt.
const maxReadSize = 1 << 20

// CheckPrompt validates the prompt and chain fields of a plain task with
// spec sp when the task is accepted: the prompt parses; every /read names
// a file inside the directories /read may load from; a /subtask or
// /command block agrees with the fields already in the file and names
// agents taskd knows; the fields have the right types; a loop's until
// condition has a model to judge it; every return and parallel item
// parses. Errors name the line, field or item.
//
// It reads no task file: what it checks is in sp (task.Load), and j is
// the task's list in the daemon's environment. It reads the list's
// command files (through j's catalog), and the file system where a /read
// names a path: whether a path is allowed depends on where its links
// lead (resolveRead).
func CheckPrompt(j job.Scope, sp task.Spec) error {
	ov, err := chain.OverridesOf(sp)
	if err != nil {
		return err
	}
	text := sp.Text()
	pl, err := chain.PlanOf(j, sp) // one parse, for every check below
	if err != nil {
		return err
	}
	if prompt.HasCommands(text) {
		if err := chain.CheckBlock(j.Config, sp, pl); err != nil {
			return err
		}
		if pl.HasBlock {
			if ov, err = prompt.MergeOverrides(ov, pl.Block); err != nil {
				return err
			}
		}
		cwd, err := j.Cwd(sp.Cwd)
		if err != nil {
			return err
		}
		for _, st := range pl.Script.Leading {
			if r, ok := st.Cmd.(*prompt.Read); ok {
				if _, _, err := resolveRead(j, cwd, r.Path); err != nil {
					return fmt.Errorf("prompt line %d: %w", st.Line, err)
				}
			}
		}
	}
	if err := chain.CheckLoop(j.Config, sp.OwnerProfile, ov.Loop, ov.Agent); err != nil {
		return err
	}
	if strings.Contains(text, "$RESULT[") || prompt.HasTurns(text) {
		if _, err := prompt.ResultNames(pl.Content); err != nil {
			return fmt.Errorf("prompt: %w", err)
		}
		if _, err := prompt.SubstituteTurns(pl.Content, func(prompt.TurnSelection) string { return "" }); err != nil {
			return fmt.Errorf("prompt: %w", err)
		}
	}
	if sp.Worker != "" {
		if _, err := j.Config.ResolveAgent(sp.Worker, true); err != nil {
			return fmt.Errorf("metadata.taskd.worker: %w", err)
		}
	}
	for kind, items := range map[string][]string{"return": ov.Return, "parallel": ov.Parallel} {
		for i, item := range items {
			if _, err := j.ParsePrompt(item); err != nil {
				return fmt.Errorf("%s item %d (%q): %w", kind, i+1, agent.Truncate(item, 60), err)
			}
		}
	}
	// An as names one result: two parallel items may not give the same.
	first := map[string]int{}
	for i, item := range ov.Parallel {
		as := chain.ItemAs(j, item)
		if as == "" {
			continue
		}
		if n, dup := first[as]; dup {
			return fmt.Errorf("parallel items %d and %d both have as %q: $RESULT[%s] would name either; give each its own as", n, i+1, as, as)
		}
		first[as] = i + 1
	}
	return nil
}

// allowedRoots are the configuration's allowedRoots, absolute: directories
// /read may load files from besides the task's own (package readable).
func allowedRoots(j job.Scope) []string {
	var roots []string
	for _, r := range j.Config.AllowedRoots {
		if p, err := j.Cwd(r); err == nil {
			roots = append(roots, p)
		}
	}
	return roots
}

// resolveRead turns a /read path into an absolute path, with every
// symbolic link resolved, that package readable's rule allows: inside the
// task's roots, and not in /proc, /sys, /dev, a credential store or
// another user's home. ~ is the home directory and a relative path is
// relative to the task's working directory. A path that cannot be resolved
// (it does not exist) is returned as it is, to fail when it is read.
// The root that holds it is returned too, to open it from (readLimited).
func resolveRead(j job.Scope, cwd, path string) (real, root string, err error) {
	home := j.Config.Home
	p := path
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return "", "", errors.New("/read " + path + ": no home directory")
		}
		p = filepath.Join(home, strings.TrimPrefix(p[1:], "/"))
	} else if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	real = p
	if r, err := filepath.EvalSymlinks(p); err == nil {
		real = r
	} else if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		real = filepath.Join(r, filepath.Base(p))
	}
	others := readable.OtherHomes
	if j.Config.OtherHomes != nil {
		others = j.Config.OtherHomes
	}
	rule := readable.Rule{Home: home, Roots: []string{cwd, j.List.Dir.Path()}, Allowed: allowedRoots(j), Others: others(home)}
	if err := rule.Check(p, real); err != nil {
		return "", "", fmt.Errorf("/read %s: %w (the roots are the task's cwd %s, its list directory, and allowedRoots in the configuration; see docs/security.md)", path, err, cwd)
	}
	root, ok := rule.RootOf(real)
	if !ok {
		return "", "", fmt.Errorf("/read %s: %s is in none of the roots", path, real)
	}
	return real, root, nil
}

// A transcriptEntry is one half of an injected tool round trip.
type transcriptEntry struct {
	Role string         `json:"role"` // "assistant" (the call) or "tool" (its result)
	Tool string         `json:"tool"`
	Path string         `json:"path"`
	Call map[string]any `json:"call,omitempty"`
	// Content is the file read; Error is set instead when it could not be.
	Content string `json:"content,omitempty"`
	Error   string `json:"error,omitempty"`
}

// prepared is a plain task's prompt after its leading commands ran.
type prepared struct {
	script     *prompt.Script
	transcript []transcriptEntry
	// results are sections the leading commands add after the content: a
	// handed-off child's result, a converged result (package subagent,
	// convergelines.go). An exec agent gets them in $TASKD_RESULTS.
	results []string
	// feedback tells the attempt of the ones before it (retry.go); an
	// exec agent gets it in $TASKD_FEEDBACK.
	feedback string
}

// render is prompt.md: the injected round trips, then the content, the
// sections leading commands added, and what the attempt is told of the
// ones before it.
func (p *prepared) render() string {
	var b strings.Builder
	for _, e := range p.transcript {
		switch e.Role {
		case "assistant":
			call, _ := json.Marshal(e.Call)
			fmt.Fprintf(&b, "<tool_use>%s</tool_use>\n", call)
		case "tool":
			if e.Error != "" {
				fmt.Fprintf(&b, "<tool_result path=%q error=\"true\">\n%s\n</tool_result>\n\n", e.Path, e.Error)
			} else {
				fmt.Fprintf(&b, "<tool_result path=%q>\n%s\n</tool_result>\n\n", e.Path, strings.TrimSuffix(e.Content, "\n"))
			}
		}
	}
	b.WriteString(p.script.Content)
	for _, r := range p.results {
		b.WriteString("\n\n" + strings.TrimSpace(r))
	}
	if p.feedback != "" {
		b.WriteString("\n\n" + strings.TrimSpace(p.feedback))
	}
	return b.String()
}

// runLeading processes the leading commands of a plain task's prompt, in
// order, before its agent starts: /read injects a file as a read tool round
// trip (a missing or unreadable file injects the error, and the task still
// runs), /push queues a child (named after its line unless named, so running
// the commands again after a crash pushes nothing twice), /run starts queued
// children. Nothing inside a file that /read loads is processed.
func runLeading(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, cwd string) (*prepared, error) {
	l := j.List
	text := task.Prompt(t, sp)
	if !prompt.HasCommands(text) {
		return &prepared{script: &prompt.Script{Content: strings.TrimSpace(text)}}, nil
	}
	script, err := j.ParsePrompt(text)
	if err != nil {
		return nil, fmt.Errorf("prompt: %w", err)
	}
	p := &prepared{script: script}
	for _, st := range script.Leading {
		switch c := st.Cmd.(type) {
		case *prompt.Read:
			p.read(j, cwd, c.Path)
		case *prompt.Push:
			if err := pushChild(ctx, j, t.ID, c, fmt.Sprintf("line%d", st.Line)); err != nil {
				return nil, fmt.Errorf("prompt line %d: %w", st.Line, err)
			}
		case *prompt.Run:
			if _, err := children.Start(ctx, l.Dir, t.ID, c.N); err != nil {
				return nil, fmt.Errorf("prompt line %d: %w", st.Line, err)
			}
		default:
			ld := subagent.Leading{Job: j, Task: t, Spec: sp, Script: p.script, Results: &p.results}
			if err := runOrchestration(ctx, ld, st); err != nil {
				return nil, fmt.Errorf("prompt line %d: %w", st.Line, err)
			}
		}
	}
	return p, nil
}

// read records one /read round trip.
func (p *prepared) read(j *job.Job, cwd, path string) {
	call := map[string]any{"tool": "read", "path": path}
	abs, root, err := resolveRead(j.Scope, cwd, path)
	res := transcriptEntry{Role: "tool", Tool: "read", Path: path}
	if err == nil {
		call["path"] = abs
		res.Path = abs
		res.Content, err = readLimited(root, abs)
	}
	if err != nil {
		res.Error = err.Error()
	}
	p.transcript = append(p.transcript, transcriptEntry{Role: "assistant", Tool: "read", Path: res.Path, Call: call}, res)
}

// readLimited reads the file at path, a path resolveRead returned (its
// links resolved), opened from root, the root that holds it, following no
// link: a link found on the way or at its end now (put there since) is
// not followed, nor is anything but a regular file read.
func readLimited(root, path string) (string, error) {
	f, err := fsroot.OpenFile(root, path, os.O_RDONLY|syscall.O_NONBLOCK)
	if errors.Is(err, fsroot.ErrNotRegular) {
		return "", fmt.Errorf("%s is not a regular file; /read loads files: %w", path, err)
	}
	if errors.Is(err, fsroot.ErrLink) {
		return "", fmt.Errorf("%s changed while it was read (a directory on the way is now a link): %w", path, err)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReadSize+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxReadSize {
		return "", fmt.Errorf("%s is larger than %d bytes; /read loads files up to 1 MiB", path, maxReadSize)
	}
	return string(data), nil
}

// pushChild runs one /push line for parent: a queued child named name
// unless the line names it (sequential with seq=true: it then runs without
// /run, after the earlier sequential children), blocked by the children
// after= names, skipped if the parent already has a child of that name
// (the line ran before a crash).
func pushChild(ctx context.Context, j *job.Job, parent string, c *prompt.Push, name string) error {
	l := j.List
	if c.Name != "" {
		name = c.Name
	}
	if _, err := children.Named(l.Dir, parent, name); err == nil {
		return nil
	}
	_, err := children.Push(ctx, j.Config, l.Dir, parent, children.PushOptions{Name: name, Prompt: c.Prompt, Model: c.Model, Agent: c.Agent, Timeout: c.Timeout,
		Cwd: c.Cwd, Worktree: c.Worktree, After: c.After, Sequential: c.Seq})
	return err
}

// createFollowUps processes the trailing /push lines of a task that is
// about to be recorded as succeeded: follow-up tasks for its parent (queued
// in the parent's children) or, at the top level, queued tasks for the user
// to start with taskd retry. A follow-up that exists already (a restart in
// between) is not pushed again.
func createFollowUps(ctx context.Context, j *job.Job, t *taskfile.Task) error {
	l := j.List
	sp, err := task.ReadSpec(t)
	if err != nil {
		return err
	}
	text := task.Prompt(t, sp)
	if !prompt.HasCommands(text) {
		return nil
	}
	script, err := j.ParsePrompt(text)
	if err != nil || len(script.Trailing) == 0 {
		return err
	}
	for _, st := range script.Trailing {
		c, ok := st.Cmd.(*prompt.Push)
		if !ok {
			continue
		}
		name := c.Name
		if name == "" {
			name = fmt.Sprintf("%s-line%d", t.ID, st.Line)
		}
		if sp.Parent != "" {
			if err := pushChild(ctx, j, sp.Parent, &prompt.Push{Name: name, Prompt: c.Prompt, Model: c.Model, Agent: c.Agent, Timeout: c.Timeout, Cwd: c.Cwd, Worktree: c.Worktree, After: c.After, Seq: c.Seq}, name); err != nil {
				return fmt.Errorf("prompt line %d: %w", st.Line, err)
			}
			continue
		}
		if followUpExists(l, t.ID, name) {
			continue
		}
		opt := children.PushOptions{Name: name, Prompt: c.Prompt, Model: c.Model, Agent: c.Agent, Timeout: c.Timeout, Cwd: c.Cwd, Worktree: c.Worktree, After: c.After,
			Extra: map[string]any{"pushedBy": t.ID}, Inherit: chain.InheritedFields(t.Metadata.Object("taskd"))}
		if _, err := children.Push(ctx, j.Config, l.Dir, "", opt); err != nil {
			return fmt.Errorf("prompt line %d: %w", st.Line, err)
		}
	}
	return nil
}

// followUpExists reports whether task id already pushed a top-level
// follow-up called name.
func followUpExists(l *job.List, id, name string) bool {
	ids, _ := l.Dir.List()
	for _, other := range ids {
		o, err := l.Dir.Read(other)
		if err != nil {
			continue
		}
		m := o.Metadata.Object("taskd")
		by, _ := m.String("pushedBy")
		n, _ := m.String("name")
		if by == id && n == name {
			return true
		}
	}
	return false
}
