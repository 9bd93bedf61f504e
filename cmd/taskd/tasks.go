package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// taskRef is a task named on the command line.
type taskRef struct {
	root, list, id string
}

// parseTaskRef resolves LIST/ID, a path to a task file, or a bare ID: in
// $TASKD_LIST if set, else in the only list that has a task of that id.
func parseTaskRef(root, ref string) (taskRef, error) {
	r, err := parseRef(root, ref)
	if err == nil && !taskfile.ValidID(r.id) {
		err = fmt.Errorf("task %q: %q is not a task id (1-128 of A-Z a-z 0-9 _ -)", ref, r.id)
	}
	return r, err
}

func parseRef(root, ref string) (taskRef, error) {
	r, err := control.ParseRef(root, ref, os.Getenv("TASKD_LIST"))
	return taskRef{root: r.Root, list: r.List, id: r.ID}, err
}

// childOrTask resolves ref as parseTaskRef does, except that inside a
// running task (me not nil) a name without a / that is the name or id of
// one of me's children is that child.
func childOrTask(root, ref string, me *self) (taskRef, error) {
	if me == nil || strings.Contains(ref, "/") || strings.HasSuffix(ref, ".json") {
		return parseTaskRef(root, ref)
	}
	if id, err := children.Named(me.dir, me.id, ref); err == nil {
		return taskRef{root: filepath.Dir(me.dir.Path()), list: me.list, id: id}, nil
	}
	r, err := parseTaskRef(root, ref)
	if err != nil {
		return r, fmt.Errorf("%w; nor is it a child of task %s/%s", err, me.list, me.id)
	}
	if _, err := os.Lstat(filepath.Join(r.root, r.list, r.id+".json")); errors.Is(err, fs.ErrNotExist) {
		return r, fmt.Errorf("task %q: list %s has no task %s, nor is it a child of task %s/%s", ref, r.list, r.id, me.list, me.id)
	}
	return r, nil
}

func (r taskRef) dir() (*taskfile.Dir, error) { return control.OpenList(r.root, r.list, false) }
func (r taskRef) String() string              { return r.list + "/" + r.id }

// taskArgs are the tasks a command names: its arguments, under the root its --root
// flag gives; inside a running task (me), a name without a / may also be
// one of me's children.
type taskArgs struct {
	root string
	args []string
	me   *self
}

// forTasks runs fn on each task n names, and says done of each it did.
func forTasks(inv *invocation, n taskArgs, fn func(*taskfile.Dir, string) (*taskfile.Task, error), done string) error {
	root, err := daemon.ResolveRoot(n.root, os.Getenv)
	if err != nil {
		return err
	}
	var failed int
	for _, a := range n.args {
		ref, err := childOrTask(root, a, n.me)
		if err == nil {
			var dir *taskfile.Dir
			if dir, err = ref.dir(); err == nil {
				_, err = fn(dir, ref.id)
			}
		}
		if err != nil {
			fmt.Fprintf(inv.stderr, "taskd %s: %s: %v\n", inv.cmd.name, a, err)
			failed++
			continue
		}
		fmt.Fprintf(inv.stdout, "%s %s\n", ref, done)
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

func init() {
	register(
		&command{
			name:  "submit",
			usage: "[--root DIR] [--list ID] [--subject S] [--agent A] [--model M] [--cwd DIR] [--worktree] [--permission-mode M] [--tools T,...] [--disallowed-tools T,...] [--max-turns N] [--max-cost-usd USD] [--timeout D] [--retries N] [--blocked-by ID,...] [--priority N] [--at TIME | --in DURATION] [--schedule CRON [--overlap]] [--workflow ID [--autonomy]] [--json] [PROMPT | -]",
			short: "write a new task file",
			group: "Tasks",
			long: `
Submit writes a new task file addressed to taskd into a list and prints its
path. The id is allocated as Claude Code allocates ids, so taskd and Claude
Code never collide. The prompt is the argument, or standard input with -.
With --json, standard input is a whole task (Claude Code's format, any
fields) and the flags add to it.

The list is --list, else $TASKD_LIST, else "default"; it is created if
missing. The subject defaults to the prompt's first line.

The agent runs where you submit: the task records the current directory
(absolute) as metadata.taskd.cwd, or --cwd, resolved against the current
directory. --worktree runs it in a git worktree of its own, on the branch
taskd/<list>/<id>, made from the repository there (in taskd's state
directory, where Claude Code can edit); when the task succeeds its work is
committed to that branch: 'taskd diff' shows it, git merge takes it.

What a claude agent may do: --permission-mode (default, acceptEdits,
plan, bypassPermissions), --tools and --disallowed-tools (comma-separated,
such as Read,Edit,Bash(git:*)). A run whose tool calls were refused does
not succeed: the task asks you (taskd status shows the answers). What an
attempt may spend: --max-turns and --max-cost-usd; past either, the agent
is stopped and the task fails. docs/agents.md has the details.

	taskd submit --agent exec 'make test'
	cd ~/src/app && taskd submit --permission-mode acceptEdits 'fix the flaky login test'
	taskd submit --worktree --max-cost-usd 2 'add tests for the parser'
	echo 'Summarise CHANGES.md' | taskd submit --list notes -
	taskd submit --workflow quick-task --subject 'Fix the login redirect'

--autonomy sets metadata.autonomy: the workflow walks on through its
stage boundaries instead of completing at each (docs/workflows.md).

When it starts (docs/scheduling.md): --priority N (a whole number,
default 0) starts it before the tasks of its list of lower priority;
--at TIME or --in DURATION (metadata.taskd.notBefore) holds it until then:
TIME is 02:00 (the next 02:00, local time), "2026-01-05 02:00" or an RFC
3339 time, DURATION is 90s, 2h or 3d. --schedule CRON makes the task a
schedule (metadata.taskd.schedule): it never runs itself, but at each time
of the cron expression a run of it is made, a task of its own with its
prompt and settings; a time that comes while the last run still goes is
passed over unless --overlap. 'taskd status' shows when each starts.

	taskd submit --in 8h --agent exec 'make release-notes'
	taskd submit --priority 10 'fix the build first'
	taskd submit --schedule '0 2 * * *' 'bump the dependencies and run the tests'

Submit fails (status 1) when standard input is not a task with --json,
when the list name is not 1-128 of A-Z a-z 0-9 _ -, and when the file
cannot be written; without a prompt or --workflow, or with --autonomy
but no workflow, it prints its usage (status 2). Submit does not check the agent or the workflow: a daemon
rejects a task that names unknown ones, and 'taskd status' shows why.
`,
			run: runSubmit,
		},
		&command{
			name:  "cancel",
			usage: "[--root DIR] TASK...",
			short: "cancel tasks (running agents are stopped)",
			group: "Tasks",
			long: `
Cancel sets metadata.taskd.cancel in each task file. The daemon stops a
running agent (SIGTERM to its process group, SIGKILL after the grace
period) and records the task as cancelled; a task that has not run is
cancelled without running; the tasks below a cancelled task are cancelled
with it. 'taskd retry' runs it again. A running task whose file the
daemon rejects, or that an edit took from taskd meanwhile, is cancelled
too: its agent does not run on unseen.

` + taskNames + `

Inside a running task (an agent's, whose environment names its task in
$TASKD_TASK_FILE) a name without a / that is the name or id of one of that
task's children is that child: 'taskd cancel review' cancels the child
called review, as 'taskd child cancel review' does.

A task that does not exist, is not addressed to taskd or has already
ended is reported on standard error and left alone; the others are still
cancelled, and the exit status is 1.
`,
			run: runCancel,
		},
		&command{
			name:  "retry",
			usage: "[--root DIR] TASK...",
			short: "run tasks again",
			group: "Tasks",
			long: `
Retry makes the tasks named run again: a failed, cancelled, timed-out or
stopped task is retried from scratch (its failure count reset), a child
queued by /push is released, a needs_human task is restarted from its
current step, and a completed task runs once more. A running or waiting
task is left alone. To run a workflow again from its first step, use
'taskd restart'.

` + taskNames + `

	taskd retry work/7
	taskd retry 7 8

A task that does not exist, is not taskd's, or is running or waiting is
reported on standard error and the exit status is 1; the other tasks named
still run again.
`,
			run: runRetry,
		},
		&command{
			name:  "resolve",
			usage: "[--root DIR] LIST/ID ANSWER [--note TEXT]",
			short: "answer a task that waits for a person",
			group: "Tasks",
			long: `
Resolve answers a task in state needs_human by setting
metadata.taskd.resolve, exactly as editing the file by hand would. The
answer must be one of the options the task lists in metadata.taskd.hitl
(shown by taskd status): for a workflow's human step, passed (go on as if
the step passed) or failed, each offered only where the workflow has a
way on for it, or leave (keep it waiting); for a loop guard, continue,
abort or investigate; for a step, a loop's judge or an answer to vote on
whose model gave no verdict, even asked again, the verdict (passed or
failed; break or continue; abstain or retry) or fail; for refused tool
calls, allow (exactly those calls, continuing the same session),
allow-tool (their whole tools), retry or fail. A workflow that completed
at a stage boundary (metadata.taskd.boundary) takes continue: it walks on
into its next stage.

--note TEXT gives directions with the answer (metadata.taskd.resolveNote):
the daemon puts them into the prompt of the step that runs next, and
keeps them in the step trace.

	taskd resolve work/7 passed --note 'Use the existing date helper.'
	taskd resolve work/7 continue
	taskd resolve work/8 allow

Resolve fails (status 1) when the task does not exist, neither waits for
a person nor stopped at a stage boundary, or does not accept the answer;
the message lists the answers it accepts. To run a needs_human task again
from its step instead, use 'taskd retry'; from its first step, 'taskd
restart'.
`,
			run: runResolve,
		},
	)
}

// taskEdit parses [--root DIR] LIST/ID... and applies fn to each task.
func taskEdit(ctx context.Context, inv *invocation, done string, fn func(*taskfile.Dir, string) (*taskfile.Task, error)) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return inv.usageErrorf("name at least one task")
	}
	return forTasks(inv, taskArgs{root: *root, args: fs.Args()}, fn, done)
}

// runCancel implements 'taskd cancel TASK...': inside a running task, a
// child's name is that child.
func runCancel(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return inv.usageErrorf("name at least one task")
	}
	var me *self
	if os.Getenv("TASKD_TASK_FILE") != "" {
		s, err := findSelf("")
		if err != nil {
			return err
		}
		me = s
	}
	return forTasks(inv, taskArgs{root: *root, args: fs.Args(), me: me}, func(dir *taskfile.Dir, id string) (*taskfile.Task, error) {
		return control.CancelTask(ctx, dir, id)
	}, "cancel requested")
}

// taskNames is how the commands that act on tasks read a task's name.
const taskNames = `A task is named LIST/ID, by the path of its file (which must be
<root>/<list>/<id>.json: a file outside the root is refused), or by its id alone:
the id is looked up in $TASKD_LIST if that is set, else in the only list
that has a task of that id (or the only list there is); when several
lists have it, the command fails and names them (LIST/ID for each), so
that you can say which.`

// runRetry implements 'taskd retry TASK...'.
func runRetry(ctx context.Context, inv *invocation) error {
	return taskEdit(ctx, inv, "will run", func(dir *taskfile.Dir, id string) (*taskfile.Task, error) {
		return control.StartTask(ctx, dir, id)
	})
}

func runResolve(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	note := fs.String("note", "", "directions for the step that runs next")
	if err := inv.parse(fs); err != nil {
		return err
	}
	args := fs.Args()
	if len(args) != 2 {
		return inv.usageErrorf("want a task and an answer")
	}
	answer := args[1]
	return forTasks(inv, taskArgs{root: *root, args: args[:1]}, func(dir *taskfile.Dir, id string) (*taskfile.Task, error) {
		return control.ResolveNote(ctx, dir, id, answer, *note)
	}, "answered "+answer)
}

func runSubmit(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	list := fs.String("list", "", "list to submit to")
	subject := fs.String("subject", "", "the task's subject")
	agentName := fs.String("agent", "", "agent profile or name")
	model := fs.String("model", "", "model for the agent")
	cwd := fs.String("cwd", "", "working directory of the agent (default: the current directory)")
	worktree := fs.Bool("worktree", false, "run in a git worktree of its own, on branch taskd/<list>/<id>")
	permissionMode := fs.String("permission-mode", "", "permission mode of a claude agent (default, acceptEdits, plan, bypassPermissions)")
	tools := fs.String("tools", "", "comma-separated tools the agent may use without asking")
	disallowedTools := fs.String("disallowed-tools", "", "comma-separated tools the agent may not use")
	maxTurns := fs.Int("max-turns", 0, "turns (model calls) an attempt may take")
	maxCost := fs.Float64("max-cost-usd", 0, "US dollars an attempt may spend")
	timeout := fs.String("timeout", "", "timeout, such as 10m")
	retries := fs.Int("retries", 0, "retries after a failure")
	blockedBy := fs.String("blocked-by", "", "comma-separated ids that must complete first")
	priority := fs.Int("priority", 0, "start before the tasks of lower priority (default 0)")
	at := fs.String("at", "", "start at TIME: 02:00, \"2026-01-05 02:00\" or an RFC 3339 time")
	in := fs.String("in", "", "start in DURATION: 90s, 2h, 3d")
	schedule := fs.String("schedule", "", "make a run of the task at each time of this cron expression")
	overlap := fs.Bool("overlap", false, "with --schedule: start a run even while the last one still goes")
	workflow := fs.String("workflow", "", "workflow to walk")
	autonomy := fs.Bool("autonomy", false, "walk on through the workflow's stage boundaries")
	asJSON := fs.Bool("json", false, "read a whole task as JSON from standard input")
	if err := inv.parse(fs); err != nil {
		return err
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	req := control.Request{Prompt: strings.Join(fs.Args(), " "), Subject: *subject, Agent: *agentName, Model: *model,
		Workflow: *workflow, Autonomy: *autonomy, Cwd: *cwd, Worktree: *worktree, PermissionMode: *permissionMode,
		Tools: splitList(*tools), DisallowedTools: splitList(*disallowedTools), MaxTurns: *maxTurns, MaxCostUSD: *maxCost,
		Timeout: *timeout, Retries: *retries}
	if *blockedBy != "" {
		req.BlockedBy = strings.Split(*blockedBy, ",")
	}
	var base *taskfile.Task
	switch {
	case *asJSON:
		data, err := io.ReadAll(stdin)
		if err != nil {
			return err
		}
		if base, err = taskfile.Parse(data, "standard input", ""); err != nil {
			return err
		}
		req.Prompt = ""
	case req.Prompt == "-":
		data, err := io.ReadAll(stdin)
		if err != nil {
			return err
		}
		if req.Prompt = string(data); strings.TrimSpace(req.Prompt) == "" {
			return inv.usageErrorf("standard input holds no prompt")
		}
	}
	t, err := req.Task(base)
	switch {
	case errors.Is(err, control.ErrNoPrompt):
		return inv.usageErrorf("give the prompt as an argument, or - to read it from standard input")
	case errors.Is(err, control.ErrAutonomyNeedsWorkflow):
		return inv.usageErrorf("--autonomy applies to a workflow; add --workflow ID")
	case errors.Is(err, control.ErrNegativeBound):
		return inv.usageErrorf("--max-turns and --max-cost-usd are bounds ≥ 0")
	case err != nil:
		return err
	}
	if err := (queueFlags{priority: *priority, at: *at, in: *in, schedule: *schedule, overlap: *overlap}).set(ctx, t.EnsureMetadata().EnsureObject("taskd")); err != nil {
		return inv.usageErrorf("%v", err)
	}
	if _, err := task.ReadSpec(t); err != nil {
		return inv.usageErrorf("%v", err) // the daemon would reject the file
	}
	listID := firstNonEmpty(*list, os.Getenv("TASKD_LIST"), "default")
	dir, err := control.OpenList(r, listID, true)
	if err != nil {
		return err
	}
	created, err := control.Submit(ctx, dir, t)
	if err != nil {
		return err
	}
	fmt.Fprintln(inv.stdout, dir.File(created.ID))
	warnNoDaemon(inv, r)
	return nil
}

// subjectOf is the subject a prompt gives a task (control.SubjectOf).
func subjectOf(prompt string) string { return control.SubjectOf(prompt) }

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstLineOf(s string) string { return control.FirstLine(s) }

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// fileRef resolves the path of a task file as a task of root
// (control.FileRef).
func fileRef(root, path string) (taskRef, error) {
	r, err := control.FileRef(root, path)
	return taskRef{root: r.Root, list: r.List, id: r.ID}, err
}
