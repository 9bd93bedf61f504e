package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/taskd/taskd/internal/allowenv"
	"github.com/taskd/taskd/internal/proc"
)

// A Call is one git command: the directory it runs in, its arguments
// (after the hardening options Git puts first), and what its environment
// has besides the allow-list: more of the daemon's variables by name
// (Pass: names or NAME* prefixes, such as SSH_AUTH_SOCK for a fetch), and
// variables set (Set: NAME=value).
type Call struct {
	Dir  string
	Args []string
	Pass []string
	Set  []string
}

// hardening are the options every git command of taskd's starts with:
// no pager; no hooks (core.hooksPath names no directory); no fsmonitor,
// which would run a command of the repository's, or start a daemon; no
// signing program (taskd's commits are unsigned); no automatic gc or
// maintenance started in the background; and never the ext:: transport,
// which runs a command. Filter drivers of the repository's own
// configuration are turned off per repository (guard).
var hardening = []string{
	"--no-pager",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "commit.gpgSign=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "protocol.ext.allow=never",
}

// Git runs one git command and returns what it printed on standard
// output, without its last newlines. Its environment is the allow-list agents get (package
// allowenv) with PATH, plus c.Pass and c.Set, and GIT_TERMINAL_PROMPT=0:
// nothing else of the daemon's environment (no secret, no GIT_DIR or
// GIT_CONFIG_* of its own) reaches git, or anything git runs. It is the
// one place taskd starts git, through package proc (so that the daemon's
// reaper of orphans never takes its exit status). A command that fails
// returns an *Error.
func Git(ctx context.Context, c Call) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	args := append(slices.Clone(hardening), c.Args...)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = c.Dir
	cmd.Env = append(allowenv.Environ(append([]string{"PATH"}, append(allowenv.Base, c.Pass...)...)), c.Set...)
	cmd.Env = append(cmd.Env, "GIT_TERMINAL_PROMPT=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := proc.Run(cmd)
	out := strings.TrimRight(stdout.String(), "\n")
	if err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return out, &Error{Op: firstWord(c.Args), Code: code, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	return out, nil
}

// An Error is a git command that failed: the subcommand, its exit status
// (-1 when it did not exit), what it said on standard error.
type Error struct {
	Op     string
	Code   int
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	if e.Stderr != "" {
		return "git " + e.Op + ": " + e.Stderr
	}
	return fmt.Sprintf("git %s: %v", e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// exitCode is the exit status of the git command err is the failure of:
// 0 for no error, -1 when it did not exit.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ge *Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return -1
}

// firstWord is the subcommand of args, after any -c options.
func firstWord(args []string) string {
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-c" || args[i] == "-C":
			i++
		case !strings.HasPrefix(args[i], "-"):
			return args[i]
		}
	}
	return "command"
}

// A repo runs git commands in one directory of a repository, with the
// repository's own filter drivers turned off.
type repo struct {
	dir   string
	guard []string
}

// open returns a repo for dir, having read which filter drivers the
// repository's own configuration defines (guard).
func open(ctx context.Context, dir string) (*repo, error) {
	g, err := guard(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &repo{dir: dir, guard: g}, nil
}

// git runs git in the repo's directory.
func (r *repo) git(ctx context.Context, args ...string) (string, error) {
	return Git(ctx, Call{Dir: r.dir, Args: append(slices.Clone(r.guard), args...)})
}

// gitEnv is git with variables set.
func (r *repo) gitEnv(ctx context.Context, set []string, args ...string) (string, error) {
	return Git(ctx, Call{Dir: r.dir, Args: append(slices.Clone(r.guard), args...), Set: set})
}

// guard returns the options that turn off every filter driver
// (filter.<name>.clean, smudge, process) that the configuration of the
// repository at dir defines itself (its local or worktree scope, includes
// followed), which checking out, adding or comparing files would
// otherwise run: a repository's configuration is written by whoever works
// in it, agents included. Drivers from the user's own or the system's
// configuration (git-lfs, say) stay. Reading the configuration runs
// nothing.
func guard(ctx context.Context, dir string) ([]string, error) {
	out, err := Git(ctx, Call{Dir: dir, Args: []string{"config", "-z", "--show-scope", "--get-regexp", `^filter\.`}})
	if err != nil {
		if exitCode(err) == 1 {
			return nil, nil // none
		}
		return nil, fmt.Errorf("read the repository's configuration: %w", err)
	}
	var opts []string
	seen := map[string]bool{}
	// Each entry is scope NUL key NEWLINE value NUL.
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		scope := fields[i]
		key, _, _ := strings.Cut(fields[i+1], "\n")
		if scope != "local" && scope != "worktree" {
			continue
		}
		name, ok := strings.CutPrefix(key, "filter.")
		if !ok {
			continue
		}
		if dot := strings.LastIndexByte(name, '.'); dot > 0 {
			name = name[:dot]
		}
		if !seen[name] {
			seen[name] = true
			for _, v := range []string{"clean=", "smudge=", "process=", "required=false"} {
				opts = append(opts, "-c", "filter."+name+"."+v)
			}
		}
	}
	return opts, nil
}

// repositories holds a lock for each repository (by its common git
// directory) whose worktrees are being added, moved or removed: git does
// not lock its list of worktrees, and one git worktree add reading it
// while another writes it fails ("failed to read .git/worktrees/…").
var repositories sync.Map // common dir → *sync.Mutex

// lockRepository locks the repository whose common git directory is
// common for adding, moving or removing a worktree, and returns the
// unlock.
func lockRepository(common string) func() {
	mu, _ := repositories.LoadOrStore(filepath.Clean(evalDir(common)), new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}
