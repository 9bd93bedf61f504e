package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/taskd/taskd/daemon/handoff"
	"github.com/taskd/taskd/internal/termtext"
)

func init() {
	register(&command{
		name:  "claude",
		usage: "install|uninstall [--project] [--dry-run] [--force]",
		short: "teach Claude Code sessions to hand work to taskd (a skill)",
		group: "Other",
		long: `
'taskd claude install' writes a Claude Code skill, taskd, that teaches a
session to queue work for taskd: in any session, ask "hand this to taskd"
(or type /taskd WHAT), and the session writes a prompt that stands on its
own and runs taskd submit from the project's directory, with the permission
mode and the tools the work needs (and --worktree where you keep working in
the checkout), then tells you the task's name and how to follow it.

The skill is ~/.claude/skills/taskd/SKILL.md ($CLAUDE_CONFIG_DIR/skills/…
when that is set), for every session of yours; with --project,
.claude/skills/taskd/SKILL.md under the current directory, for the sessions
of that project (commit it to share it). Install says what it wrote;
--dry-run prints the file and where it would go, and writes nothing.

Running install again updates a skill it wrote. A file of that name that
taskd did not write is left alone unless --force; a symbolic link is never
written through. 'taskd claude uninstall' removes the skill taskd wrote.
Both fail (status 1) on such a file, and when the file cannot be written
or removed.

A session can also hand work over with its own task tools: a task it
creates in its list with owner "taskd" or a metadata.taskd runs in the
session's project directory (docs/agents.md, "From a Claude Code
session").
`,
		run: runClaude,
	})
}

func runClaude(ctx context.Context, inv *invocation) error {
	if len(inv.args) == 0 || (inv.args[0] != "install" && inv.args[0] != "uninstall") {
		return inv.usageErrorf("want install or uninstall")
	}
	verb := inv.args[0]
	inv.args = inv.args[1:]
	fs := inv.flags()
	project := fs.Bool("project", false, "the current directory's project, not your user")
	dryRun := fs.Bool("dry-run", false, "print what would be written, write nothing")
	force := fs.Bool("force", false, "replace a skill file taskd did not write")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return inv.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	dir, err := claudeDir(*project)
	if err != nil {
		return err
	}
	path := handoff.SkillPath(dir)
	home, _ := os.UserHomeDir()
	shown := termtext.Home(path, home)
	if verb == "uninstall" {
		if *dryRun {
			fmt.Fprintf(inv.stdout, "would remove %s (if taskd wrote it)\n", shown)
			return nil
		}
		removed, err := handoff.RemoveSkill(path)
		switch {
		case err != nil:
			return err
		case removed:
			fmt.Fprintf(inv.stdout, "removed %s\n", shown)
		default:
			fmt.Fprintf(inv.stdout, "no skill at %s: nothing to remove\n", shown)
		}
		return nil
	}
	if *dryRun {
		fmt.Fprintf(inv.stdout, "would write %s:\n\n%s", shown, handoff.Skill)
		return nil
	}
	change, err := handoff.InstallSkill(path, *force)
	if err != nil {
		return err
	}
	who := "your Claude Code sessions"
	if *project {
		who = "Claude Code sessions in " + termtext.Home(filepath.Dir(dir), home)
	}
	switch change {
	case handoff.SkillUpToDate:
		fmt.Fprintf(inv.stdout, "%s is up to date: nothing written\n", shown)
		return nil
	case handoff.SkillReplaced:
		fmt.Fprintf(inv.stdout, "replaced %s with this version's skill\n", shown)
	default:
		fmt.Fprintf(inv.stdout, "wrote %s\n", shown)
	}
	fmt.Fprintf(inv.stdout, "Now %s can hand work to taskd: ask \"hand this to taskd\", or type /taskd WHAT.\n(A session already running may need a restart to see it.)\n", who)
	return nil
}

// claudeDir is the .claude directory the skill goes into: the user's
// ($CLAUDE_CONFIG_DIR, else ~/.claude), or the current directory's.
func claudeDir(project bool) (string, error) {
	if project {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		return filepath.Join(wd, ".claude"), nil
	}
	if dir := os.Getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return filepath.Abs(dir)
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("no home directory: set HOME, or CLAUDE_CONFIG_DIR")
	}
	return filepath.Join(home, ".claude"), nil
}
