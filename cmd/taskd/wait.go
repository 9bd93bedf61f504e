package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

func init() {
	register(&command{
		name:  "wait",
		usage: "[--root DIR] [--timeout D] LIST/ID...",
		short: "wait until tasks end; exit with how they ended",
		group: "Tasks",
		long: `
Wait waits until every task named has ended, printing a line as each one
does, and exits with their outcome: 0 when all succeeded, 1 when any
failed, was cancelled, timed out or was stopped (or does not exist or was
removed), 124 when --timeout passed first. A task no daemon will run ends
the wait at once, with the reason, as a failure: one the daemon refused
(taskd status shows why), a file it does not read, and a task of Claude
Code's own (not addressed to taskd) that is not completed. A task that waits for a person
keeps wait waiting; wait says so once on standard error, with the command
that answers it.

` + taskNames + `

	id=$(taskd submit --agent exec 'make test' | xargs basename -s .json)
	taskd wait "$id" && echo green
`,
		run: runWait,
	})
}

// exitWaitTimeout is wait's status when its --timeout passes, as
// timeout(1)'s.
const exitWaitTimeout = 124

func runWait(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	rootFlag := fs.String("root", "", "root of task lists")
	timeout := fs.Duration("timeout", 0, "give up after this long (exit status 124)")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return inv.usageErrorf("name at least one task")
	}
	root, err := daemon.ResolveRoot(*rootFlag, os.Getenv)
	if err != nil {
		return err
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	var refs []taskRef
	failed := false
	for _, a := range fs.Args() {
		ref, err := parseTaskRef(root, a)
		if err == nil {
			err = w.Add(filepath.Join(ref.root, ref.list))
			w.Add(area.RejectedDir(filepath.Join(ref.root, ref.list))) // its note, if it is refused
		}
		if err != nil {
			fmt.Fprintf(inv.stderr, "taskd wait: %s: %v\n", a, err)
			failed = true
			continue
		}
		refs = append(refs, ref)
	}
	warnNoDaemon(inv, root)
	told := map[taskRef]bool{}
	// A poll besides the events: a watch can lose events (overflow).
	poll := time.NewTicker(2 * time.Second)
	defer poll.Stop()
	for {
		var left []taskRef
		for _, ref := range refs {
			ended, ok, note := outcomeOf(ref)
			switch {
			case ended:
				fmt.Fprintf(inv.stdout, "%s %s\n", ref, note)
				failed = failed || !ok
			default:
				if note != "" && !told[ref] {
					fmt.Fprintf(inv.stderr, "taskd wait: %s %s\n", ref, note)
					told[ref] = true
				}
				left = append(left, ref)
			}
		}
		refs = left
		if len(refs) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			for _, ref := range refs {
				fmt.Fprintf(inv.stderr, "taskd wait: %s has not ended\n", ref)
			}
			return &exitError{code: exitWaitTimeout}
		case <-w.Events:
		case <-w.Errors:
		case <-poll.C:
		}
	}
	if failed {
		return &exitError{code: 1}
	}
	return nil
}

// outcomeOf reads task ref: whether it has ended, whether that is a
// success, and a note for the person waiting (how it ended, or why it
// does not go on by itself).
//
// A task no daemon will run ends the wait at once, as a failure with the
// reason: one the daemon refused (its note in .taskd/rejected), a file
// taskd does not read (a link, not a regular file, another user's), and a
// task not addressed to taskd (Claude Code's own), unless it is completed.
func outcomeOf(ref taskRef) (ended, ok bool, note string) {
	listDir := filepath.Join(ref.root, ref.list)
	t, err := taskfile.ReadFile(filepath.Join(listDir, ref.id+".json"))
	var bad *taskfile.BadFileError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, false, "does not exist (or was removed)"
	case err == nil || errors.As(err, &bad):
		if data, nerr := fsroot.ReadFile(listDir, area.RejectNote(listDir, ref.id+".json"), 64<<10); nerr == nil {
			// The note's first line is "<file>: <the reason>".
			reason, _ := strings.CutPrefix(strings.TrimSpace(string(data)), filepath.Join(listDir, ref.id+".json")+": ")
			reason, _, _ = strings.Cut(reason, "\n")
			return true, false, "refused by the daemon: " + reason
		}
	}
	switch {
	case bad != nil && !errors.Is(err, taskfile.ErrInvalidJSON) && !errors.Is(err, taskfile.ErrTooLarge):
		return true, false, "refused: " + strings.TrimPrefix(bad.Error(), bad.Path+": ")
	case err != nil:
		return false, false, "" // torn by a writer, or being fixed: read it again
	}
	if owned, _ := task.Addressed(t); !owned {
		if t.Status == taskfile.StatusCompleted {
			return true, true, "completed"
		}
		return true, false, "is not addressed to taskd (no owner \"taskd\", no metadata.taskd): it is Claude Code's own, and no daemon runs it"
	}
	sp, err := task.ReadSpec(t)
	if err != nil {
		return false, false, ""
	}
	switch {
	case sp.State == task.Succeeded:
		return true, true, "succeeded"
	case sp.State.Ended():
		msg, _ := task.Meta(t).String("error")
		if msg != "" {
			return true, false, string(sp.State) + ": " + firstLineOf(msg)
		}
		return true, false, string(sp.State)
	case sp.State == task.NeedsHuman:
		return false, false, "needs a person: see taskd status " + ref.String() + ", answer with taskd resolve " + ref.String() + " ANSWER"
	}
	return false, false, ""
}

// warnNoDaemon says on standard error when no daemon serves root: the
// tasks written there wait until one does.
func warnNoDaemon(inv *invocation, root string) {
	if held, _, err := daemon.LockHolder(root); err == nil && !held {
		fmt.Fprintf(inv.stderr, "taskd %s: no daemon serves %s: tasks wait until one does (taskd start, or taskd run)\n", inv.cmd.name, root)
	}
}
