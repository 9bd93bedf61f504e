package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/pausefile"
)

func init() {
	register(&command{
		name:  "resume",
		usage: "[--root DIR] PROFILE | --profile PROFILE",
		short: "lift a usage limit's pause of an agent profile now",
		group: "Tasks",
		long: `
Resume lifts the pause a usage limit put an agent profile in, before it
ends by itself: the tasks the pause held may start at once, and the tasks
the limit paused resume now (their sessions, for claude), instead of at
the reset time the agent named or at the end of the backoff. Use it when
you know the limit is gone sooner (a plan upgraded, a key changed).

A pause is recorded in the root's pause file, .taskd-pauses.json, which
the daemon reads when it starts and whenever it changes: resume removes
the profile's pause from it, and makes each task the profile's limit
paused due now (metadata.taskd.retryAt and pause.until). With no daemon
running, the tasks start when one does. Should the agent meet the limit
again, the profile pauses again.

'taskd status' shows, on every task a pause holds, the profile, the
limit in the agent's words, and until when (docs/agents.md, usage limits).

Resume fails (status 1) when the profile is not paused and no task is
paused by it.
`,
		run: runResume,
	})
}

func runResume(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	profile := fs.String("profile", "", "the agent profile whose pause to lift")
	if err := inv.parse(fs); err != nil {
		return err
	}
	switch {
	case *profile == "" && fs.NArg() == 1:
		*profile = fs.Arg(0)
	case *profile == "" || fs.NArg() > 0:
		return inv.usageErrorf("name one agent profile")
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	lifted, resumed, err := pausefile.Resume(ctx, r, *profile, time.Now())
	if errors.Is(err, pausefile.ErrNotPaused) {
		return &exitError{code: 1, err: err}
	}
	if err != nil {
		return err
	}
	if lifted != nil {
		fmt.Fprintf(inv.stdout, "profile %s: pause lifted (%s, until %s)\n", *profile, lifted.Reason, lifted.Until.Local().Format("Jan 2 15:04"))
	} else {
		fmt.Fprintf(inv.stdout, "profile %s: not paused any more\n", *profile)
	}
	if len(resumed) > 0 {
		fmt.Fprintf(inv.stdout, "resume now: %s\n", strings.Join(resumed, " "))
	}
	return nil
}
