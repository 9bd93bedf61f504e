package handoff

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
	"github.com/taskd/taskd/internal/fsroot"
	"golang.org/x/sys/unix"
)

// The skill is a Claude Code skill (a SKILL.md file under a .claude
// directory's skills/taskd/) that teaches a session to queue work for
// taskd: a prompt that stands alone, the permission mode and tools the
// work needs, the project's directory, and what to tell the user. A user
// invokes it as /taskd WHAT, or a session uses it when asked to hand work
// off.

// SkillMarker is in every skill file taskd writes: a file without it is
// someone else's, which InstallSkill does not replace unless forced and
// RemoveSkill leaves alone.
const SkillMarker = "<!-- Written by 'taskd claude install'; running it again replaces this file. -->"

// Skill is the skill file's content.
const Skill = `---
name: taskd
description: Queue work for taskd, the task daemon on this machine, which runs it in the background with an agent of its own and keeps what happened. Use when the user asks to hand work off, queue it, run it in the background or later, or give it to taskd.
argument-hint: "[what to do]"
allowed-tools: Bash(taskd submit:*), Bash(taskd show:*), Bash(taskd status:*)
---

` + SkillMarker + `

Queue this work for taskd: $ARGUMENTS

(If nothing follows the colon, queue what the user just asked you to hand
off.)

taskd runs each task with an agent of its own (Claude Code, claude -p) that
sees none of this conversation. So:

1. Write the agent's prompt so that it stands alone: what to do and why,
   the files and commands involved, what you and the user found out that it
   needs, how to check that the work is done (the tests or the command to
   run), and what to report at the end.

2. Give the agent what the work needs, and no more:
   - It edits files: --permission-mode acceptEdits. It only reads and
     reports: leave the permission mode out.
   - Each command it must run, as narrowly as you can name it:
     --tools 'Bash(go test:*),Bash(make lint)'. A call it was not allowed
     stops the task until the user allows it (taskd show says which).
   - In a git repository, when the user goes on working in this checkout,
     add --worktree: the agent works on a branch of its own.
   - A limit the user gave: --max-cost-usd 2, --max-turns 30.

3. Run taskd submit from the project's directory (your working directory),
   the flags before the prompt, the prompt in single quotes (write '\'' for
   a quote inside it):

       taskd submit --subject 'Fix the flaky login test' --permission-mode acceptEdits --tools 'Bash(go test:*)' 'The login test in ...'

   The agent runs in the directory you run taskd submit from; --cwd DIR
   names another. taskd submit prints the path of the task's file,
   .../tasks/LIST/ID.json: the task is LIST/ID.

4. Tell the user that it is queued, as LIST/ID, and how to follow it:
   taskd show LIST/ID (what happened: the agent's summary, its cost, its
   branch, the end of its output), taskd logs -f LIST/ID (the agent's
   transcript as it works), taskd wait LIST/ID (until it ends). Do not wait
   for it yourself unless the user asks you to.

If taskd submit warns that no daemon serves the task root, tell the user:
the task is written, and runs once the daemon does (taskd start starts the
user service).
`

// SkillPath is where the skill lives under a .claude directory: the
// user's ($CLAUDE_CONFIG_DIR, or ~/.claude) or a project's.
func SkillPath(claudeDir string) string {
	return filepath.Join(claudeDir, "skills", "taskd", "SKILL.md")
}

// A SkillChange is what InstallSkill did.
type SkillChange int

const (
	SkillWritten  SkillChange = iota // there was none
	SkillReplaced                    // an older one taskd wrote, or (forced) another
	SkillUpToDate                    // the same was there: nothing written
)

// ErrNotOurs is returned for a skill file that taskd did not write.
var ErrNotOurs = errors.New("a skill file taskd did not write")

// InstallSkill writes the skill at path, atomically, making its directory
// if needed. A file taskd wrote (SkillMarker) is replaced; another file is
// replaced only with force. A symbolic link, or anything but a regular
// file, is never written through or replaced.
func InstallSkill(path string, force bool) (SkillChange, error) {
	change := SkillWritten
	old, err := readSkill(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return 0, err
	case bytes.Equal(old, []byte(Skill)):
		return SkillUpToDate, nil
	case !bytes.Contains(old, []byte(SkillMarker)) && !force:
		return 0, fmt.Errorf("%s is %w: leave it, or replace it with --force", path, ErrNotOurs)
	default:
		change = SkillReplaced
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	if err := renameio.WriteFile(path, []byte(Skill), 0o644); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return change, nil
}

// RemoveSkill removes the skill file at path if taskd wrote it, and its
// directory if that is then empty. It reports whether there was one.
func RemoveSkill(path string) (bool, error) {
	old, err := readSkill(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !bytes.Contains(old, []byte(SkillMarker)):
		return false, fmt.Errorf("%s is %w: remove it yourself if you want it gone", path, ErrNotOurs)
	}
	if err := os.Remove(path); err != nil {
		return false, err
	}
	os.Remove(filepath.Dir(path)) // only if empty
	return true, nil
}

// readSkill reads the skill file at path: a regular file, not through a
// link, at most 1 MiB.
func readSkill(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return nil, fmt.Errorf("%s is a symbolic link (to %s), which taskd does not write through: remove it, or write the skill there yourself (taskd claude install --dry-run prints it)", path, target)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	// Opened without following a link or waiting on a FIFO, whatever took
	// its place since.
	f, err := fsroot.OpenRegular(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, fsroot.ErrNotRegular) {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err == nil && len(data) > 1<<20 {
		return nil, fmt.Errorf("%s is %w (larger than 1 MiB)", path, ErrNotOurs)
	}
	return data, err
}
