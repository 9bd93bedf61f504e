package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/install"
)

func init() {
	register(
		&command{
			name:  "install",
			usage: "[--root DIR] [--config FILE] [--dry-run]",
			short: "install taskd as a user service and start it",
			group: "Service",
			long: `
Install makes taskd a service of the current user, enables it and starts it.
On Linux it is a systemd --user unit, ~/.config/systemd/user/taskd.service:
wanted by default.target, restarted 5 seconds after a failure, logging to
the journal. On macOS it is a launchd agent,
~/Library/LaunchAgents/com.github.taskd.taskd.plist: run at load, kept
alive, logging to ~/Library/Logs/taskd/. The service runs this binary, by
its real path, as 'taskd run --root DIR [--config FILE]' with absolute
paths, and sets nothing else.

Installing again replaces the service (stop, remove, install, start): after
upgrading taskd, run 'taskd install' again to run the new binary.

On Linux, install warns when lingering is off for the user, because the
service then stops at logout and does not start at boot, and gives the
command that turns it on (loginctl enable-linger USER).

The service does not see the shell's environment. To give it variables
such as PATH or ANTHROPIC_API_KEY, see
https://github.com/taskd/taskd/blob/main/docs/service.md.

Install refuses to run as root (the service is the user's) and to install
a binary that 'go run' built in a temporary directory. Where there is no
service manager, as in a container without systemd, it says so and how to
run 'taskd run' instead.

Flags:

	--root DIR     the task root (default: $TASKD_ROOT, else
	               $CLAUDE_CONFIG_DIR/tasks, else ~/.claude/tasks)
	--config FILE  the config file (default: taskd run's default)
	--dry-run      print the unit or plist file and the commands install
	               would run, and change nothing
`,
			run: runInstall,
		},
		&command{
			name:  "uninstall",
			usage: "",
			short: "stop the user service and remove it",
			group: "Service",
			long: `
Uninstall stops taskd's user service and removes its unit (Linux) or agent
(macOS). When the service is not installed there is nothing to do, and
that is not an error. Task files and their logs are left alone. It fails
when run as root, when there is no service manager, and when the manager
cannot stop or remove the service.
`,
			run: func(ctx context.Context, inv *invocation) error {
				return serviceCommand(ctx, inv, (*install.Service).Uninstall)
			},
		},
		&command{
			name:  "start",
			usage: "",
			short: "start the user service",
			group: "Service",
			long: `
Start starts taskd's user service. It fails when the service is not
installed; 'taskd install' installs and starts it. (With task names,
'taskd start LIST/ID...' is the old name of 'taskd retry', kept for one
release.)
`,
			run: func(ctx context.Context, inv *invocation) error {
				return serviceCommand(ctx, inv, (*install.Service).Start)
			},
		},
		&command{
			name:  "stop",
			usage: "",
			short: "stop the user service until the next start, login or boot",
			group: "Service",
			long: `
Stop stops taskd's user service. It stays installed, and starts again with
'taskd start', or at the next login or boot. A service that is not running
is no error; stop fails when the service is not installed, when run as
root and when there is no service manager.
`,
			run: func(ctx context.Context, inv *invocation) error {
				return serviceCommand(ctx, inv, (*install.Service).Stop)
			},
		},
		&command{
			name:  "service-status",
			usage: "",
			short: "show whether the user service is installed and running",
			group: "Service",
			long: `
Service-status prints whether taskd's user service is installed (and where
its unit or agent file is), whether it is running, and how to read its
logs. It exits with status 0 when the service runs, 3 when it is installed
but not running, and 1 when it is not installed.
`,
			run: runServiceStatus,
		},
	)
}

func runInstall(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	rootFlag := fs.String("root", "", "the task root")
	configFile := fs.String("config", "", "the config file")
	dryRun := fs.Bool("dry-run", false, "print what install would do, and change nothing")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return inv.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	root, err := daemon.ResolveRoot(*rootFlag, os.Getenv)
	if err != nil {
		return err
	}
	flags := install.Flags{Root: root}
	if *configFile != "" {
		if flags.Config, err = filepath.Abs(*configFile); err != nil {
			return err
		}
		if st, err := os.Stat(flags.Config); err != nil {
			return fmt.Errorf("--config: %w", err)
		} else if !st.Mode().IsRegular() {
			return fmt.Errorf("--config: %s is not a regular file", flags.Config)
		}
	}
	s, err := install.New()
	if err != nil {
		return err
	}
	if *dryRun {
		return s.DryRun(inv.stdout, flags)
	}
	return s.Install(ctx, inv.stdout, flags)
}

// serviceCommand runs one of the commands that take no arguments.
func serviceCommand(ctx context.Context, inv *invocation, op func(*install.Service, context.Context, io.Writer) error) error {
	if len(inv.args) > 0 {
		return inv.usageErrorf("takes no arguments")
	}
	s, err := install.New()
	if err != nil {
		return err
	}
	return op(s, ctx, inv.stdout)
}

func runServiceStatus(ctx context.Context, inv *invocation) error {
	if len(inv.args) > 0 {
		return inv.usageErrorf("takes no arguments")
	}
	s, err := install.New()
	if err != nil {
		return err
	}
	st, err := s.Status(ctx)
	if err != nil {
		return err
	}
	if !st.Installed {
		return &exitError{code: 1, err: fmt.Errorf("%w (there is no %s); install it with 'taskd install'", install.ErrNotInstalled, st.File)}
	}
	running := "yes"
	if !st.Running {
		running = "no"
		if st.Detail != "" {
			running += " (" + st.Detail + ")"
		}
	}
	fmt.Fprintf(inv.stdout, "installed: %s\nrunning:   %s\nlogs:      %s\n", st.File, running, st.Logs)
	if !st.Running {
		return &exitError{code: 3}
	}
	return nil
}
