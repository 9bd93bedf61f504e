package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/retention"
	"github.com/taskd/taskd/taskfile"
)

func init() {
	register(
		&command{
			name:  "clean",
			usage: "[--root DIR] [--config FILE] [--older-than AGE] [--tasks] [--dry-run] [-v] [LIST...]",
			short: "remove what ended tasks left, as the retention policy says",
			group: "Tasks",
			long: `
Clean applies the retention policy to every list of the root (or to the
lists named): the run folders and inboxes of ended tasks untouched for
longer than the policy's age (30 days unless the configuration's
retention.maxAge says otherwise, or --older-than AGE, such as 7d or 12h)
are removed, and each ended task keeps at most its last retention.keepRuns
run folders (3). An event log past its size is rotated, and lock
directories kept by processes that are gone are removed. The daemon does
the same at start and every hour; clean is for doing it now, or harder.

Nothing of a task that has not ended is touched. With --tasks, clean
also removes the files of taskd's tasks that ended long enough ago, with
their run folders and inboxes (and, once a daemon sees them gone, their
git worktrees; their branches stay): those that succeeded more than
retention.succeededTasks ago (7 days unless the configuration says
otherwise), those that failed, timed out, were stopped or cancelled more
than retention.failedTasks ago (30 days); --older-than AGE sets both ages.
A task that one which has not ended still needs is kept: a blocker in its
blockedBy, its parent, ancestors and children, a schedule's last run. The
daemon removes such tasks at start and every hour too; tasks that are not
taskd's are never removed ('taskd rm' removes any task). A list taskd would refuse to serve
(another user's, writable by others, a link in its .taskd) is left alone
and named on standard error. Clean is safe while a daemon runs.

--dry-run lists what would go, with why and its size, and removes nothing;
-v lists what goes. Clean prints a summary line for each list.

	taskd clean --dry-run
	taskd clean --older-than 7d nightly
	taskd clean --tasks --older-than 1d

Clean fails (status 1) when a list cannot be read or something cannot be
removed, after doing the rest.
`,
			run: runClean,
		},
		&command{
			name:  "rm",
			usage: "[--root DIR] [--force] LIST/ID...",
			short: "remove tasks: their files, run folders and inboxes",
			group: "Tasks",
			long: `
Rm removes each task: its file, under the locks every writer takes, then
its run folders and its inbox. A task that is running or waiting for its
children, and a task not addressed to taskd (one of Claude Code's own),
are refused unless --force is given; then the daemon, seeing the file
gone, stops its agent. The task's children, if any, are left as they
are. A task's git worktree is removed by the daemon once it sees the file
gone (the next daemon, if none runs), never its branch: what the worktree
held uncommitted is committed to the branch first, files the repository
ignores excepted (docs/agents.md). A task file is only ever one of a list
of the root: a path to a file elsewhere (or through a link out of the
root) is refused.

` + taskNames + `

Rm fails (status 1) for a task that does not exist or is refused, after
removing the others.
`,
			run: runRm,
		},
	)
}

func runClean(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	configFile := fs.String("config", "", "configuration file")
	olderThan := fs.String("older-than", "", "remove what ended tasks left untouched for longer than AGE (30d, 12h)")
	dryRun := fs.Bool("dry-run", false, "list what would be removed, remove nothing")
	verbose := fs.Bool("v", false, "list what is removed")
	tasks := fs.Bool("tasks", false, "also remove the files of tasks that ended long enough ago")
	if err := inv.parse(fs); err != nil {
		return err
	}
	cfg, err := loadConfig(*root, *configFile, nil)
	if err != nil {
		return err
	}
	p := retention.Policy{MaxAge: cfg.Retention.MaxAge, KeepRuns: cfg.Retention.KeepRuns}
	if *olderThan != "" {
		if p.MaxAge, err = config.ParseAge(*olderThan); err != nil {
			return inv.usageErrorf("--older-than: %v", err)
		}
	}
	tp := retention.TaskPolicy{Succeeded: cfg.Retention.SucceededTasks, Failed: cfg.Retention.FailedTasks}
	if *olderThan != "" {
		tp = retention.TaskPolicy{Succeeded: p.MaxAge, Failed: p.MaxAge}
	}
	if !*tasks {
		tp = retention.TaskPolicy{}
	}
	if p.MaxAge == 0 {
		p.MaxAge = 100 * 365 * 24 * time.Hour // retention.maxAge "off": only keepRuns
	}
	lists := fs.Args()
	if len(lists) == 0 {
		if lists, err = control.ListNames(cfg.Root); err != nil {
			return err
		}
	}
	failed := false
	c := cleaning{policy: p, tasks: tp, dryRun: *dryRun, list: *verbose || *dryRun}
	for _, id := range lists {
		if err := cleanTasks(ctx, inv, cfg, id, c); err != nil {
			fmt.Fprintf(inv.stderr, "taskd clean: %s: %v\n", id, err)
			failed = true
		}
		if err := cleanList(inv, cfg, id, c); err != nil {
			fmt.Fprintf(inv.stderr, "taskd clean: %s: %v\n", id, err)
			failed = true
		}
	}
	if failed {
		return &exitError{code: 1}
	}
	return nil
}

// A cleaning is what taskd clean does to each list: apply policy to its
// run folders and tasks to its ended task files, or only say what it
// would remove (dryRun); list names each path and task.
type cleaning struct {
	policy       retention.Policy
	tasks        retention.TaskPolicy
	dryRun, list bool
}

// cleanList applies c to one list and prints what it did.
func cleanList(inv *invocation, cfg *config.Config, id string, c cleaning) error {
	p, dryRun, list := c.policy, c.dryRun, c.list
	dir, err := control.OpenList(cfg.Root, id, false)
	if err != nil {
		return err
	}
	if err := area.CheckList(dir.Path(), cfg.Insecure); err != nil {
		return fmt.Errorf("left alone: %w", err)
	}
	rs, err := retention.Plan(dir.Path(), p, time.Now(), retention.Tasks(dir))
	locks, lerr := retention.PlanLocks(dir.Path())
	rs = append(rs, locks...)
	if err == nil {
		err = lerr
	}
	var bytes int64
	for _, r := range rs {
		bytes += r.Bytes
		if list {
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			fmt.Fprintf(inv.stdout, "%s %s (%s, %s)\n", verb, filepath.Join(id, r.Path), r.Why, humanBytes(r.Bytes))
		}
	}
	rotate := eventsOver(dir.Path(), cfg.Retention)
	if dryRun {
		fmt.Fprintf(inv.stdout, "%s: would remove %d paths, %s%s\n", id, len(rs), humanBytes(bytes), rotateNote(rotate, " and rotate the event log"))
		return err
	}
	if _, aerr := retention.Apply(dir.Path(), rs); aerr != nil && err == nil {
		err = aerr
	}
	if rotate {
		if rerr := eventlog.Rotate(dir.Path(), cfg.Retention.EventsKeep); rerr != nil && err == nil {
			err = rerr
		}
	}
	fmt.Fprintf(inv.stdout, "%s: removed %d paths, %s%s\n", id, len(rs), humanBytes(bytes), rotateNote(rotate, "; rotated the event log"))
	return err
}

// cleanTasks removes the task files of list id that c's task policy
// removes, and prints what it did (each task with c.list set).
func cleanTasks(ctx context.Context, inv *invocation, cfg *config.Config, id string, c cleaning) error {
	p, dryRun, list := c.tasks, c.dryRun, c.list
	if p == (retention.TaskPolicy{}) {
		return nil
	}
	dir, err := control.OpenList(cfg.Root, id, false)
	if err != nil {
		return err
	}
	if err := area.CheckList(dir.Path(), cfg.Insecure); err != nil {
		return fmt.Errorf("left alone: %w", err)
	}
	now := clockOf(ctx).Now()
	rs, err := retention.PlanTasks(dir, p, now)
	if err != nil {
		return err
	}
	var errs []error
	removed := 0
	for _, r := range rs {
		verb := "would remove"
		if !dryRun {
			verb = "removed"
			if _, err := control.RemoveIf(ctx, dir, r.ID, retention.StillExpired(dir, p, now)); err != nil {
				errs = append(errs, fmt.Errorf("task %s: %w", r.ID, err))
				continue
			}
		}
		removed++
		if list {
			fmt.Fprintf(inv.stdout, "%s task %s/%s (%s)\n", verb, id, r.ID, r.Why)
		}
	}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	fmt.Fprintf(inv.stdout, "%s: %s %d ended %s\n", id, verb, removed, plural(removed, "task", "tasks"))
	return errors.Join(errs...)
}

// eventsOver reports whether the list's event log has reached the size
// the policy rotates it at.
func eventsOver(listDir string, r config.Retention) bool {
	fi, err := os.Lstat(area.EventsFile(listDir))
	return err == nil && r.EventsMaxBytes > 0 && fi.Size() >= r.EventsMaxBytes
}

func rotateNote(rotate bool, note string) string {
	if rotate {
		return note
	}
	return ""
}

// humanBytes formats a size for people: 512 B, 24 KiB, 2.4 GiB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func runRm(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	force := fs.Bool("force", false, "remove a running task (the daemon stops its agent), or one not addressed to taskd, too")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return inv.usageErrorf("name at least one task")
	}
	return forTasks(inv, taskArgs{root: *root, args: fs.Args()}, func(dir *taskfile.Dir, id string) (*taskfile.Task, error) {
		_, err := control.Remove(ctx, dir, id, *force)
		return nil, err
	}, "removed")
}
