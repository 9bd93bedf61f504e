package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/status"
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
removed), 124 when --timeout passed first. A task that waits for a person
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
func outcomeOf(ref taskRef) (ended, ok bool, note string) {
	o := status.ReadOutcome(filepath.Join(ref.root, ref.list), ref.id)
	switch {
	case o.State == "missing":
		return true, false, "does not exist (or was removed)"
	case o.State == "refused":
		return true, false, "refused by the daemon: " + firstLineOf(o.Reason)
	case o.Ended && o.Reason != "":
		return true, o.OK, o.State + ": " + firstLineOf(o.Reason)
	case o.NeedsHuman:
		return false, false, "needs a person: see taskd status " + ref.String() + ", answer with taskd resolve " + ref.String() + " ANSWER"
	case !o.Ended:
		return false, false, ""
	}
	return true, o.OK, o.State
}

// warnNoDaemon says on standard error when no daemon serves root: the
// tasks written there wait until one does.
func warnNoDaemon(inv *invocation, root string) {
	if held, _, err := daemon.LockHolder(root); err == nil && !held {
		fmt.Fprintf(inv.stderr, "taskd %s: no daemon serves %s: tasks wait until one does (taskd start, or taskd run)\n", inv.cmd.name, root)
	}
}
