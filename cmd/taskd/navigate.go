package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/taskd/taskd/daemon/flow"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
	"github.com/taskd/taskd/workflows"
)

func init() {
	register(&command{
		name:  "navigate",
		usage: "[--task FILE] [--workflow ID] [--result R] [--step ID] [--autonomy | --autonomy=false] [--description TEXT] [--workflows DIR]... [--source-root DIR] [--project-root DIR] [--record-start]",
		short: "perform one flow Navigate call and print the response",
		group: "Workflows",
		long: `
Navigate performs one call of the flow plugin's Navigate on a task file,
exactly as flow's navigator does, and prints the response as one JSON object
on stdout. It is the function the daemon walks workflows with, for scripts
and other orchestrators.

Without a current step in the task (or without --task) it starts the
workflow and prints the first step; with a current step and no --result it
prints that step; with --result passed or failed it advances, prints the next
step and writes the new state into the task file (metadata, and subject,
activeForm and description), atomically and under the task's locks. A task
whose metadata names a workflow ignores --workflow.

	--task FILE          the task file (<id>.json); "~/" is the home directory
	--workflow ID        the workflow to start when there is no task file
	--result R           passed or failed: advance from the current step
	--step ID            start at this step instead of the first one
	--autonomy           cross stage boundaries without stopping, and record
	                     that in the task; --autonomy=false switches it off
	--description TEXT   the user's description (default: metadata.userDescription)
	--workflows DIR      also load <id>.json workflows from DIR (repeatable;
	                     later directories win over earlier ones, which win over
	                     $XDG_CONFIG_HOME/taskd/workflows, <list>/.taskd/workflows
	                     and the built-ins)
	--source-root DIR    resolve "./" paths in the workflow against DIR (default:
	                     the directory the workflow was loaded from; none for
	                     built-ins); --source-root= for none
	--project-root DIR   resolve context_files against DIR (default: the current
	                     directory); --project-root= for none
	--record-start       when the call starts the workflow, record the first step
	                     in the task file, as /flow:run does when it creates a task

When the current step has no edge for the result, the response is flow's error
object ({"error": ..., "currentStep": ..., "evaluation": ...}), nothing is
written and the exit status is 3. Any other failure (an unknown workflow or
step, a workflow with errors, a missing or malformed task file) is reported on
stderr with exit status 1. Traps that 'taskd workflows validate' reports (no
end reachable, a cycle with no way out, an unconditional self-loop, a gate
that cannot fail) do not stop navigate: flow walks such workflows, and so
does navigate; the daemon refuses them. A task file whose "id" disagrees with its name is refused, not corrected:
fix the id or rename the file.

Examples:

	taskd navigate --workflow bug-fix --description "Login redirect loops"
	taskd navigate --task ~/.claude/tasks/proj/7.json
	taskd navigate --task ~/.claude/tasks/proj/7.json --result passed
`,
		run: runNavigate,
	})
}

func runNavigate(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	var in navigator.Input
	var taskPath string
	var autonomy optionalBool
	var dirs stringList
	sourceRoot, projectRoot := optionalString{}, optionalString{}
	recordStart := fs.Bool("record-start", false, "")
	fs.StringVar(&taskPath, "task", "", "")
	fs.StringVar(&in.WorkflowType, "workflow", "", "")
	fs.StringVar(&in.Result, "result", "", "")
	fs.StringVar(&in.StepID, "step", "", "")
	fs.StringVar(&in.Description, "description", "", "")
	fs.Var(&autonomy, "autonomy", "")
	fs.Var(&dirs, "workflows", "")
	fs.Var(&sourceRoot, "source-root", "")
	fs.Var(&projectRoot, "project-root", "")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return inv.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	in.Autonomy = autonomy.value
	in.ProjectRoot = projectRoot.value
	if !projectRoot.set {
		if wd, err := os.Getwd(); err == nil {
			in.ProjectRoot = wd
		}
	}
	listDir := ""
	if taskPath != "" {
		listDir = filepath.Dir(flow.TaskFilePath(taskPath))
	}
	cat := &cliCatalog{dirs: append(workflows.Dirs(listDir), dirs...), root: sourceRoot}

	var resp *navigator.Response
	var wt *navigator.WriteThrough
	var err error
	if taskPath != "" {
		resp, wt, err = flow.NavigateFile(ctx, cat, taskPath, in, flow.NavigateFileOptions{RecordStart: *recordStart})
	} else {
		resp, _, err = navigator.Navigate(cat, nil, in)
	}
	var nm *navigator.NoMatchError
	var bad *taskfile.BadFileError
	switch {
	case errors.As(err, &nm):
		inv.stdout.Write(append(nm.AppendJSON(nil), '\n'))
		return &exitError{code: 3}
	case cat.err != nil:
		return cat.err
	case errors.Is(err, navigator.ErrUnknownWorkflow) && cat.broken != nil:
		return cat.brokenError()
	case errors.Is(err, navigator.ErrUnknownWorkflow):
		return fmt.Errorf("%w\nRun 'taskd workflows list' for the workflows taskd knows.", err)
	case errors.As(err, &bad):
		return fmt.Errorf("%w\n%s", err, bad.Fix)
	case err != nil:
		return err
	}
	if wt != nil && wt.IDWarning != "" {
		fmt.Fprintln(inv.stderr, wt.IDWarning)
	}
	_, err = inv.stdout.Write(append(resp.AppendJSON(nil), '\n'))
	return err
}

// cliCatalog finds the requested workflow in the built-ins and user
// directories (loading only that one), optionally with its source root
// replaced, and remembers a definition that is broken or unreadable so that
// the error can say why. It judges definitions in Compatible mode: a
// workflow whose only errors are traps (a cycle with no way out, a gate
// that cannot fail, …) is navigated, as flow navigates it.
type cliCatalog struct {
	dirs   []string
	root   optionalString
	broken *workflows.Definition
	err    error
}

func (c *cliCatalog) Lookup(id string) (*navigator.Workflow, string, bool) {
	d, err := workflows.Find(id, c.dirs...)
	switch {
	case err != nil:
		c.err = err
		return nil, "", false
	case d == nil:
		return nil, "", false
	case !d.Usable(navigator.Compatible):
		c.broken = d
		return nil, "", false
	}
	root := d.SourceRoot
	if c.root.set {
		root = c.root.value
	}
	return d.Workflow, root, true
}

func (c *cliCatalog) brokenError() error {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %q (%s) has errors; fix them (taskd workflows validate lists them):", c.broken.ID, c.broken.File)
	for _, p := range c.broken.Problems {
		if p.Blocks(navigator.Compatible) {
			b.WriteString("\n  ")
			b.WriteString(p.String())
		}
	}
	return errors.New(b.String())
}

// optionalBool is a boolean flag that remembers whether it was given:
// --autonomy, --autonomy=true, --autonomy=false.
type optionalBool struct{ value *bool }

func (b *optionalBool) IsBoolFlag() bool { return true }

func (b *optionalBool) String() string {
	if b == nil || b.value == nil {
		return ""
	}
	return strconv.FormatBool(*b.value)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	b.value = &v
	return nil
}

// optionalString is a string flag that remembers whether it was given, so
// that --flag= can mean "none" rather than "the default".
type optionalString struct {
	value string
	set   bool
}

func (s *optionalString) String() string { return s.value }

func (s *optionalString) Set(v string) error {
	s.value, s.set = v, true
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
