package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// These commands are for agents that taskd runs: they act on the agent's
// own task, found through $TASKD_TASK_FILE (or --task LIST/ID or FILE, for a
// person trying them out).

// self is the task an in-execution command acts for.
type self struct {
	dir  *taskfile.Dir
	id   string
	list string
	cfg  *config.Config
}

// findSelf resolves the acting task from --task or $TASKD_TASK_FILE, a
// task of the root ($TASKD_ROOT, which taskd gives its agents): a file
// elsewhere is refused (fileRef).
func findSelf(taskFlag string) (*self, error) {
	path := os.Getenv("TASKD_TASK_FILE")
	if taskFlag == "" && path == "" {
		return nil, errors.New("no task: this command is for agents taskd runs ($TASKD_TASK_FILE is not set); name a task with --task LIST/ID")
	}
	root, err := daemon.ResolveRoot("", os.Getenv)
	if err != nil {
		return nil, err
	}
	var ref taskRef
	if taskFlag != "" {
		ref, err = parseTaskRef(root, taskFlag)
	} else if ref, err = fileRef(root, path); err == nil && !taskfile.ValidID(ref.id) {
		err = fmt.Errorf("%q is not a task id", ref.id)
	}
	if err != nil && taskFlag == "" {
		return nil, fmt.Errorf("$TASKD_TASK_FILE: %w", err)
	}
	if err != nil {
		return nil, err
	}
	dir, err := ref.dir()
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(ref.root, os.Getenv("TASKD_CONFIG"), nil)
	if err != nil {
		return nil, err
	}
	return &self{dir: dir, id: ref.id, list: ref.list, cfg: cfg}, nil
}

func init() {
	register(
		&command{name: "child push", group: groupChild,
			usage: "[--task T] [--seq] [--start] [--after NAME]... [name=N] [model=M] [agent=A] [timeout=S] [cwd=DIR] [worktree=true|false] PROMPT",
			short: "queue a child task",
			long: `
Child push queues a child of the current task: a new task file in the same list
with metadata.taskd.parent and a name unique among its siblings, inheriting
the parent's agent, model, working directory, worktree setting and
permission mode unless overridden: cwd=DIR runs it elsewhere (a relative
DIR is taken from the parent's directory), worktree=false runs it without
a git worktree of its own, worktree=true with one. It is queued (not started) until 'taskd child start'; --start starts
it at once, --seq puts it in the sequential collection (its sequential
siblings run one after another). --after NAME (repeatable, or NAME,NAME)
makes it run only once the current task's child NAME (a name or an id)
has completed: the child is blocked by it (blockedBy). The prompt may
begin with its own /read lines; they are processed when the child starts.
It prints the child's id.

The parent's children are bounded in number (maxChildren, default 10) and
depth (maxDepth, default 3). Push fails (status 1) beyond those bounds,
for a name a sibling already has, for an --after that names no child,
without a prompt, for a child the daemon would reject (an agent no
profile or mapping names, such as agent=../../bin/sh; a NUL byte in its
prompt): nothing is written, so the parent never waits for a child that
cannot run. Outside a task (no $TASKD_TASK_FILE and no --task), or with
a $TASKD_TASK_FILE outside the root, it fails too.
`,
			run: runPush},
		&command{name: "child start", group: groupChild, usage: "[--task T] [N]",
			short: "start queued children (up to N)",
			long: `
Child start starts up to N of the current task's queued children, all of
them without N, in the order they were pushed. They run in parallel within
the daemon's limits. When the current task's agent ends while its started
children still run, the task waits, and is resumed with their results.
Outside a task (no $TASKD_TASK_FILE and no --task) it fails with status 1;
with no queued child it starts nothing.
`,
			run: runRunChildren},
		&command{name: "child list", group: groupChild, usage: "[--task T] [--json]",
			short: "list the current task's children",
			long: `
Child list lists the current task's children: queued, running (with their age)
and finished (with their outcome and summary). Outside a task (no $TASKD_TASK_FILE and no --task) it fails with status 1.
`,
			run: runQueue},
		&command{name: "child inbox", group: groupChild, usage: "[--task T] [--json]",
			short: "show the messages waiting in the inbox, without consuming them",
			long: `
Child inbox lists the messages in the current task's inbox that have not
been consumed: results of finished children and messages sent with 'taskd
child send'.
Outside a task (no $TASKD_TASK_FILE and no --task) it fails with status 1.
`,
			run: runInbox},
		&command{name: "child check", group: groupChild, usage: "[--task T] [--from ID] [--lifo] [--json]",
			short: "take one message from the inbox if there is one (never waits)",
			long: `
Child check consumes and prints the oldest message in the current task's inbox
(--lifo: the newest; --from ID: only from that task). It never waits: with
no message it prints nothing on standard output, says so on standard error,
and exits with status 1. Outside a task (no $TASKD_TASK_FILE and no --task) it fails with status 1.
`,
			run: func(ctx context.Context, inv *invocation) error { return runTake(ctx, inv, false) }},
		&command{name: "child receive", group: groupChild, usage: "[--task T] [--from ID] [--lifo] [--timeout D] [--json]",
			short: "take one message from the inbox, waiting for one",
			long: `
Child receive consumes and prints one message from the current task's
inbox like 'taskd child check', but waits until one arrives. It wakes on the file system event of a
delivery, without polling. With --timeout (such as 30s or 10m) it gives up
after that long with exit status 1. Two receivers never get the same
message. Outside a task (no $TASKD_TASK_FILE and no --task) it fails with status 1.
`,
			run: func(ctx context.Context, inv *invocation) error { return runTake(ctx, inv, true) }},
		&command{name: "child send", group: groupChild, usage: "[--task T] TASK MESSAGE",
			short: "send a message to another task's inbox",
			long: `
Child send delivers MESSAGE to the inbox of TASK (an id in the same list, or
LIST/ID). The task must exist and not have ended: otherwise send fails
with status 1 and delivers nothing. The message's sender is the current
task, or "user" outside a task.
`,
			run: runSend},
		&command{name: "child cancel", group: groupChild, usage: "[--task T] NAME",
			short: "cancel a child by name",
			long: `
Child cancel cancels the current task's child called NAME (or with that
id): a running child's agent is stopped, a queued one never starts. It is
'taskd cancel NAME' for a child. It fails (status 1) when the current task
has no such child, when the child has already ended, and outside a task.
`,
			run: runKill},
	)
}

// agentFlags adds --task to fs and parses; it returns the acting task.
func agentSetup(inv *invocation, extra func(*flagSet)) (*self, []string, error) {
	fs := inv.flags()
	task := fs.String("task", "", "act for this task (LIST/ID or file) instead of $TASKD_TASK_FILE")
	if extra != nil {
		extra(fs)
	}
	if err := inv.parse(fs); err != nil {
		return nil, nil, err
	}
	s, err := findSelf(*task)
	return s, fs.Args(), err
}

func runPush(ctx context.Context, inv *invocation) error {
	var seq, start *bool
	var after listFlags
	s, args, err := agentSetup(inv, func(fs *flagSet) {
		seq = fs.Bool("seq", false, "sequential child")
		start = fs.Bool("start", false, "start it at once")
		fs.Var(&after, "after", "run after the child of this name (repeatable)")
	})
	if err != nil {
		return err
	}
	opt, err := parsePushArgs(args)
	if err != nil {
		return inv.usageErrorf("%v", err)
	}
	opt.Sequential, opt.Start = *seq, *start
	for _, a := range after {
		opt.After = append(opt.After, strings.Split(a, ",")...)
	}
	child, err := children.Push(ctx, s.cfg, s.dir, s.id, opt)
	if err != nil {
		return err
	}
	fmt.Fprintln(inv.stdout, child.ID)
	return nil
}

// parsePushArgs reads [name=N] [model=M] [agent=A] [timeout=S] [cwd=DIR]
// [worktree=true|false] PROMPT.
func parsePushArgs(args []string) (children.PushOptions, error) {
	var opt children.PushOptions
	for len(args) > 0 {
		k, v, ok := strings.Cut(args[0], "=")
		if !ok {
			break
		}
		switch k {
		case "name":
			opt.Name = v
		case "model":
			opt.Model = v
		case "agent":
			opt.Agent = v
		case "cwd":
			if v == "" {
				return opt, errors.New("cwd= needs a directory")
			}
			opt.Cwd = v
		case "worktree":
			if v != "true" && v != "false" {
				return opt, fmt.Errorf("worktree=%s: use worktree=true or worktree=false", v)
			}
			w := v == "true"
			opt.Worktree = &w
		case "timeout":
			d, err := time.ParseDuration(v)
			if n, nerr := strconv.Atoi(v); nerr == nil {
				d, err = time.Duration(n)*time.Second, nil
			}
			if err != nil || d <= 0 {
				return opt, fmt.Errorf("timeout=%s is not a duration such as 90s or 10m", v)
			}
			opt.Timeout = d
		default:
			goto prompt
		}
		args = args[1:]
	}
prompt:
	opt.Prompt = strings.Join(args, " ")
	if opt.Prompt == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return opt, err
		}
		opt.Prompt = string(data)
	}
	if strings.TrimSpace(opt.Prompt) == "" {
		return opt, errors.New("give the child's prompt (or - to read it from standard input)")
	}
	return opt, nil
}

func runRunChildren(ctx context.Context, inv *invocation) error {
	s, args, err := agentSetup(inv, nil)
	if err != nil {
		return err
	}
	n := 0
	if len(args) > 1 {
		return inv.usageErrorf("takes at most one number")
	}
	if len(args) == 1 {
		if n, err = strconv.Atoi(args[0]); err != nil || n < 1 {
			return inv.usageErrorf("N must be a number ≥ 1")
		}
	}
	started, err := children.Start(ctx, s.dir, s.id, n)
	if err != nil {
		return err
	}
	for _, id := range started {
		fmt.Fprintln(inv.stdout, id)
	}
	if len(started) == 0 {
		fmt.Fprintln(inv.stderr, "no queued children")
	}
	return nil
}

func runQueue(ctx context.Context, inv *invocation) error {
	var asJSON *bool
	s, _, err := agentSetup(inv, func(fs *flagSet) { asJSON = fs.Bool("json", false, "print JSON") })
	if err != nil {
		return err
	}
	cs, err := children.List(s.dir, s.id)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(inv.stdout, cs)
	}
	if len(cs) == 0 {
		fmt.Fprintln(inv.stdout, "no children")
	}
	for _, c := range cs {
		what := c.State
		switch {
		case c.State == string(task.Queued) || c.State == "" && c.Collection == "queued":
			what = "queued"
		case c.State == string(task.Starting):
			what = "starting (waits for a slot) " + age(time.Now(), c.Since)
		case c.State == string(task.Running) || c.State == "":
			what = "running " + age(time.Now(), c.Since)
		}
		line := fmt.Sprintf("%-6s %-16s %-12s %s", c.ID, fit(c.Name, 16), c.Collection, what)
		if c.Summary != "" {
			line += "  " + fit(c.Summary, 60)
		}
		fmt.Fprintln(inv.stdout, line)
	}
	return nil
}

func runInbox(ctx context.Context, inv *invocation) error {
	var asJSON *bool
	s, _, err := agentSetup(inv, func(fs *flagSet) { asJSON = fs.Bool("json", false, "print JSON") })
	if err != nil {
		return err
	}
	msgs, err := children.InboxOf(s.dir.Path(), s.id).Peek(children.Filter{})
	if err != nil {
		return err
	}
	if *asJSON {
		if msgs == nil {
			msgs = []children.Message{}
		}
		return writeJSON(inv.stdout, msgs)
	}
	if len(msgs) == 0 {
		fmt.Fprintln(inv.stdout, "no messages")
	}
	for _, m := range msgs {
		fmt.Fprintln(inv.stdout, messageLine(m))
	}
	return nil
}

func runTake(ctx context.Context, inv *invocation, wait bool) error {
	var from *string
	var lifo, asJSON *bool
	var timeout *time.Duration
	s, _, err := agentSetup(inv, func(fs *flagSet) {
		from = fs.String("from", "", "only messages from this task")
		lifo = fs.Bool("lifo", false, "newest first")
		asJSON = fs.Bool("json", false, "print JSON")
		if wait {
			timeout = fs.Duration("timeout", 0, "give up after this long")
		}
	})
	if err != nil {
		return err
	}
	ib := children.InboxOf(s.dir.Path(), s.id)
	f := children.Filter{From: *from, LIFO: *lifo}
	var m *children.Message
	if wait {
		if *timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, *timeout)
			defer cancel()
		}
		m, err = ib.Receive(ctx, f)
	} else {
		m, err = ib.Check(f)
	}
	if errors.Is(err, children.ErrNoMessage) || err == nil && m == nil {
		if *asJSON {
			fmt.Fprintln(inv.stdout, "null")
		}
		return &exitError{code: 1, err: errors.New("no message")}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(inv.stdout, m)
	}
	fmt.Fprint(inv.stdout, messageText(*m))
	return nil
}

func runSend(ctx context.Context, inv *invocation) error {
	s, args, err := agentSetup(inv, nil)
	if err != nil && len(args) == 0 {
		return err
	}
	if len(args) < 2 {
		return inv.usageErrorf("want a task and a message")
	}
	from := "user"
	var dir *taskfile.Dir
	if s != nil {
		from, dir = s.id, s.dir
	}
	to := args[0]
	if list, id, ok := strings.Cut(to, "/"); ok {
		root, err := daemon.ResolveRoot("", os.Getenv)
		if err != nil {
			return err
		}
		if dir, err = control.OpenList(root, list, false); err != nil {
			return err
		}
		to = id
	}
	if dir == nil {
		return errors.New("send: name the recipient as LIST/ID outside a task")
	}
	if err := children.Send(dir, from, to, strings.Join(args[1:], " ")); err != nil {
		return err
	}
	subagent.AppendEvent(dir.Path(), eventlog.Event{Type: eventlog.MessageSent, Task: to, Data: map[string]any{"from": from}})
	fmt.Fprintf(inv.stdout, "sent to %s\n", to)
	return nil
}

func runKill(ctx context.Context, inv *invocation) error {
	s, args, err := agentSetup(inv, nil)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return inv.usageErrorf("name one child")
	}
	id, err := children.Named(s.dir, s.id, args[0])
	if err != nil {
		return err
	}
	if _, err := control.CancelTask(ctx, s.dir, id); err != nil {
		return err
	}
	fmt.Fprintf(inv.stdout, "%s cancelled\n", id)
	return nil
}

func messageLine(m children.Message) string {
	switch {
	case m.Success != nil:
		verdict := "succeeded"
		if !*m.Success {
			verdict = "failed"
		}
		return fmt.Sprintf("from %s (%s): %s  %s", m.From, m.Name, verdict, fit(m.Summary, 60))
	default:
		return fmt.Sprintf("from %s: %s", m.From, fit(m.Text, 70))
	}
}

// messageText renders a consumed message in full.
func messageText(m children.Message) string {
	var b strings.Builder
	b.WriteString(messageLine(m) + "\n")
	if m.Text != "" {
		b.WriteString(m.Text + "\n")
	}
	if m.Error != "" {
		b.WriteString("error: " + m.Error + "\n")
	}
	if m.Output != "" {
		b.WriteString("output:\n" + m.Output + "\n")
	}
	if m.PartialOutput != "" {
		b.WriteString("partial output:\n" + m.PartialOutput + "\n")
	}
	return b.String()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
