package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
)

// An attempt is one execution of an agent for a task: a plain task's run, a
// workflow step, a loop iteration. Each has its own run folder.
type attempt struct {
	list    *list
	taskID  string
	parent  string
	n       int    // attempt number, the run folder's name
	step    string // workflow step, if any
	profile *config.Profile
	prompt  string // the full prompt (prompt.md)
	script  string // what the agent gets if not the prompt (exec: the content alone)
	cwd     string
	timeout time.Duration
	spec    task.Spec         // model, permission mode, tools, system prompt
	resume  string            // session to resume (claude)
	sub     string            // a folder inside the run folder (a loop's judge), if any
	fork    bool              // resume as a new session (--fork-session): a subagent inheriting its parent's
	env     map[string]string // extra variables (TASKD_TRANSCRIPT, …)
	files   map[string][]byte // extra files for the run folder (transcript.json)
	// beforeStart is called once the run folder is ready, just before the
	// agent starts (a job waits there for its concurrency slot); its error
	// stops the attempt, which then never started. Unset, the slot of the
	// job that runs the attempt is acquired (jobSlot).
	beforeStart func(ctx context.Context) error
	// afterStart, if set, is called the moment the agent has started.
	afterStart func(startedAt time.Time)
	// afterExit, if set, is called the moment the agent has exited.
	afterExit func()
	// madeDir is set when the attempt made its run folder (rather than
	// using one a previous run of the same attempt number left); started,
	// once its agent has started; stopped, to beforeStart's error when that
	// kept it from starting.
	madeDir bool
	started bool
	stopped error
}

// How an attempt ended, besides its Result.
type outcome int

const (
	finished    outcome = iota // the agent exited; Result says how it went
	timedOut                   // killed at its timeout
	cancelled                  // killed because metadata.taskd.cancel was set
	interrupted                // killed because the daemon is stopping
	notStarted                 // the agent could not be started (Result.Error says why)
)

// dirPath is the attempt's run folder.
func (a *attempt) dirPath() string {
	dir := a.list.runDir(a.taskID, a.n)
	if a.sub != "" {
		dir = filepath.Join(dir, a.sub)
	}
	return dir
}

// outcomeNames are recorded in result.json for attempts that did not end on
// their own.
var outcomeNames = map[outcome]string{timedOut: "timed_out", cancelled: "cancelled", notStarted: "not_started"}

// outcomeOf maps a recorded result back to its outcome.
func outcomeOf(r Result) outcome {
	for o, name := range outcomeNames {
		if r.Outcome == name {
			return o
		}
	}
	return finished
}

// Causes for cancelling an attempt's context.
var (
	errCancelled   = errors.New("cancelled")
	errTimeout     = errors.New("timed out")
	errInterrupted = errors.New("daemon stopping")
	errTaskGone    = errors.New("task file removed") // or its list
)

// stoppedOutcome is how an attempt stopped for cause ends: cancelled, or
// interrupted (the daemon stops, the list is refused).
func stoppedOutcome(cause error) outcome {
	if errors.Is(cause, errCancelled) {
		return cancelled
	}
	return interrupted
}

// stopOf is why an attempt that ended with out was stopped: errInterrupted
// or errCancelled, or nil if it was not.
func stopOf(out outcome) error {
	switch out {
	case interrupted:
		return errInterrupted
	case cancelled:
		return errCancelled
	}
	return nil
}

// runDir returns the run folder of attempt n of task id.
func (l *list) runDir(id string, n int) string {
	return area.RunDir(l.dir.Path(), id, n)
}

// run executes the attempt: it writes prompt.md and cmd.json, starts the
// agent in its own process group with stdout and stderr going to files,
// waits for it (SIGTERM to the group on timeout, cancellation or shutdown,
// SIGKILL after the grace period), and writes result.json the moment it
// has exited. It never holds a task-file lock. ctx's cancellation cause
// (errCancelled, errInterrupted) says why an attempt was stopped.
func (d *Daemon) runAttempt(ctx context.Context, a *attempt) (Result, outcome) {
	start := time.Now()
	dir := a.dirPath()
	res, out := d.execAttempt(ctx, a, dir)
	res.DurationMs = time.Since(start).Milliseconds()
	if out != finished && res.Error == "" {
		res.Error = map[outcome]string{
			timedOut:    fmt.Sprintf("timed out after %s", a.timeout),
			cancelled:   "cancelled",
			interrupted: "interrupted: the daemon stopped while the agent ran",
		}[out]
	}
	if out != finished {
		res.Success = false
		res.Outcome = outcomeNames[out]
	}
	// The result is persisted the moment the agent has exited, before the
	// task file records it: a daemon that dies in between finds it here. An
	// attempt cut short by the daemon's own stop leaves no result, so it is
	// run again.
	if out != interrupted {
		if err := writeJSONFile(a.list.dir.Path(), filepath.Join(dir, "result.json"), res); err != nil {
			d.log.Warn("write result", "task", a.taskID, "path", dir, "err", err)
		}
	}
	return res, out
}

func (d *Daemon) execAttempt(ctx context.Context, a *attempt, dir string) (Result, outcome) {
	argv, stdinText := a.argv()
	env := d.agentEnv(a, dir)
	base := a.list.dir.Path()
	cmdInfo := map[string]any{
		"argv": argv, "cwd": a.cwd, "env": envNames(env), "profile": a.profile.Name,
		"timeout": a.timeout.String(), "step": a.step, "attempt": a.n, "prompt": a.profile.Prompt,
	}
	// record writes cmd.json, the record of how the agent is (to be)
	// started, replacing an earlier version whole.
	record := func() {
		if err := writeJSONFile(base, filepath.Join(dir, "cmd.json"), cmdInfo); err != nil {
			d.log.Warn("write cmd.json", "task", a.taskID, "path", dir, "err", err)
		}
	}
	fail := func(format string, args ...any) (Result, outcome) {
		record()
		msg := fmt.Sprintf(format, args...)
		return Result{Success: false, ExitCode: -1, Error: msg, Summary: msg}, notStarted
	}
	made, err := mkdirRun(base, dir)
	a.madeDir = made
	if err != nil {
		msg := fmt.Sprintf("create run folder: %v", err)
		return Result{Success: false, ExitCode: -1, Error: msg, Summary: msg}, notStarted
	}
	if !made {
		// A folder an earlier run of the same attempt number left (a task
		// dropped again with the same contents): its result is not this
		// attempt's, and a restart must not take it for one.
		if err := fsroot.Remove(base, filepath.Join(dir, "result.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail("remove the earlier run's result.json: %v", err)
		}
	}
	// What the agent may read is in the run folder before it starts: its
	// prompt and the files of its prompt commands, and cmd.json, how it
	// will be started. All of it is made while the job still waits for its
	// slot; cmd.json is written again with the process group the moment
	// the agent has started.
	if err := writeNewFile(base, filepath.Join(dir, "prompt.md"), []byte(a.prompt)); err != nil {
		return fail("write prompt.md: %v", err)
	}
	for name, data := range a.files {
		if err := writeNewFile(base, filepath.Join(dir, name), data); err != nil {
			return fail("write %s: %v", name, err)
		}
	}
	path, err := d.programs.lookPath(argv[0], env)
	if err != nil {
		return fail("agent profile %q: %v. Install it, or point the profile at it in %s: {\"profiles\": {%q: {\"command\": [\"/full/path/to/%s\", …]}}}",
			a.profile.Name, err, d.cfg.FileName(), a.profile.Name, filepath.Base(argv[0]))
	}
	if fi, err := os.Stat(a.cwd); err != nil || !fi.IsDir() {
		return fail("working directory %q does not exist; set metadata.taskd.cwd to an existing directory", a.cwd)
	}
	stdout, err := createLog(base, filepath.Join(dir, "stdout.log"))
	if err != nil {
		return fail("create stdout.log: %v", err)
	}
	defer stdout.Close()
	stderr, err := createLog(base, filepath.Join(dir, "stderr.log"))
	if err != nil {
		return fail("create stderr.log: %v", err)
	}
	defer stderr.Close()
	for i, arg := range argv {
		if strings.IndexByte(arg, 0) >= 0 {
			return fail("argument %d of the agent's command has a NUL byte (\\u0000), which no command line can carry; remove it from the prompt, the workflow step's command or the profile", i)
		}
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = a.cwd, env, stdout, stderr
	if stdinText != "" {
		cmd.Stdin = strings.NewReader(stdinText)
	} else if null := devNull(); null != nil {
		cmd.Stdin = null // else exec opens the null device itself
	}
	record()
	before := a.beforeStart
	if before == nil {
		before = jobSlot(ctx) // a job's slot, held already by most
	}
	if before != nil {
		if err := before(ctx); err != nil {
			a.stopped = err
			return Result{Success: false, ExitCode: -1}, stoppedOutcome(err)
		}
	}
	if err := startGroup(cmd); err != nil {
		return fail("start %s: %v", argv[0], err)
	}
	a.started = true
	startedAt := time.Now()
	pgid := cmd.Process.Pid
	// cmd.json records the process group first: recovery kills a leftover
	// agent by it.
	cmdInfo["pid"] = pgid
	record()
	if a.afterStart != nil {
		a.afterStart(startedAt)
	}

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var timeout <-chan time.Time
	if a.timeout > 0 {
		t := time.NewTimer(a.timeout)
		defer t.Stop()
		timeout = t.C
	}
	out := finished
	var waitErr error
	select {
	case waitErr = <-waited:
	case <-timeout:
		out = timedOut
		waitErr = d.stopGroup(pgid, waited)
	case <-ctx.Done():
		out = cancelled
		if errors.Is(context.Cause(ctx), errInterrupted) {
			out = interrupted
		}
		waitErr = d.stopGroup(pgid, waited)
	}
	// The leader is gone; whatever it left running in its group goes too.
	// (cmd.json stays: recovery checks the group is gone or not ours.)
	signalGroup(pgid, syscall.SIGKILL)
	if a.afterExit != nil {
		a.afterExit()
	}

	exitCode := 0
	if waitErr != nil {
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			exitCode = ee.ExitCode()
		} else {
			exitCode = -1
		}
	}
	data, _ := readTail(a.list.dir.Path(), filepath.Join(dir, "stdout.log"), maxScan)
	res := parseResult(a.profile.Output, data, exitCode)
	res.StartedAt = &startedAt
	if res.SessionID != "" && res.ToolInvocations == nil {
		// Transcript lines carry whole-second precision in places; a
		// second's slack keeps this attempt's first message in.
		if n, ok := countToolUses(claudeConfigDir(env), res.SessionID, startedAt.Add(-time.Second)); ok {
			res.ToolInvocations = &n
		}
	}
	if out == finished && !res.Success && res.Error == "" {
		res.Error = fmt.Sprintf("the agent failed (exit status %d)", exitCode)
	}
	return res, out
}

// stopGroup asks the group to stop (SIGTERM), then kills it (SIGKILL) if the
// leader has not exited after the grace period. It returns the Wait error.
func (d *Daemon) stopGroup(pgid int, waited <-chan error) error {
	signalGroup(pgid, syscall.SIGTERM)
	t := time.NewTimer(d.cfg.Grace)
	defer t.Stop()
	select {
	case err := <-waited:
		return err
	case <-t.C:
		signalGroup(pgid, syscall.SIGKILL)
		return <-waited
	}
}

// argv builds the command line for the attempt and the text for its stdin.
func (a *attempt) argv() (argv []string, stdin string) {
	p := a.profile
	argv = append(argv, p.Command...)
	s := a.spec
	switch p.Flags {
	case "claude":
		if s.Model != "" {
			argv = append(argv, "--model", s.Model)
		}
		if s.PermissionMode != "" {
			argv = append(argv, "--permission-mode", s.PermissionMode)
		}
		if len(s.Tools) > 0 {
			argv = append(argv, "--allowedTools", strings.Join(s.Tools, ","))
		}
		if len(s.DisallowTools) > 0 {
			argv = append(argv, "--disallowedTools", strings.Join(s.DisallowTools, ","))
		}
		if s.SystemPrompt != "" {
			argv = append(argv, "--append-system-prompt", s.SystemPrompt)
		}
		if a.resume != "" {
			argv = append(argv, "--resume", a.resume)
			if a.fork {
				argv = append(argv, "--fork-session")
			}
		}
	case "opencode", "codex":
		if s.Model != "" {
			argv = append(argv, "--model", s.Model)
		}
	}
	text := a.prompt
	if a.script != "" {
		text = a.script
	}
	if p.Prompt == "arg" {
		return append(argv, text), ""
	}
	return argv, text
}

// baseEnv are the variables every agent inherits from the daemon, besides
// its profile's list and taskd's own.
var baseEnv = []string{"HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TZ", "TMPDIR", "TERM", "XDG_*"}

// agentEnv builds the agent's environment: only the base variables, the
// profile's list (NAME or PREFIX*), taskd's own TASKD_* variables, and PATH
// with taskd's directory first, so agents can run taskd's in-execution
// commands.
func (d *Daemon) agentEnv(a *attempt, runDir string) []string {
	allow := append(append([]string{}, baseEnv...), a.profile.Env...)
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "PATH" || strings.HasPrefix(name, "TASKD_") {
			continue
		}
		for _, pat := range allow {
			if pat == name || strings.HasSuffix(pat, "*") && strings.HasPrefix(name, pat[:len(pat)-1]) {
				env = append(env, kv)
				break
			}
		}
	}
	path := os.Getenv("PATH")
	if d.cfg.Executable != "" {
		path = filepath.Dir(d.cfg.Executable) + string(os.PathListSeparator) + path
	}
	// TASKD_RUN_DIR goes first: recovery recognises a leftover agent by it.
	env = append([]string{"TASKD_RUN_DIR=" + runDir}, env...)
	env = append(env,
		"PATH="+path,
		"TASKD_ROOT="+d.cfg.Root,
		"TASKD_LIST="+a.list.id,
		"TASKD_TASK_ID="+a.taskID,
		"TASKD_TASK_FILE="+a.list.dir.File(a.taskID),
		"TASKD_STEP="+a.step,
		"TASKD_PARENT="+a.parent,
		"TASKD_ATTEMPT="+strconv.Itoa(a.n),
	)
	if d.cfg.ConfigPath != "" {
		if _, err := os.Stat(d.cfg.ConfigPath); err == nil {
			// taskd push, delegate, … read the daemon's configuration.
			env = append(env, "TASKD_CONFIG="+d.cfg.ConfigPath)
		}
	}
	for k, v := range a.env {
		env = append(env, k+"="+v)
	}
	return env
}

func envNames(env []string) []string {
	names := make([]string, len(env))
	for i, kv := range env {
		names[i], _, _ = strings.Cut(kv, "=")
	}
	return names
}
