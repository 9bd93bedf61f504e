// Package agent runs one attempt of an agent for a task: it builds the
// command line from the task's profile (claude, opencode, codex, a shell
// script), writes the run folder (prompt.md, cmd.json, the logs,
// result.json), starts the agent in a process group of its own with an
// allow-listed environment, stops the group on a timeout, a cancellation
// or the daemon's stop, and turns the agent's output into a Result. A Gate
// decides when a prepared agent may start. The daemon consumes it through
// a Runner; Local runs agents on this machine. Each kind of agent (claude,
// codex, opencode, a program) is one Kind (kind.go), in a file of its own.
package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/allowenv"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/proc"
)

// An Attempt is one execution of an agent for a task: a plain task's run, a
// workflow step, a loop iteration. Each has its own run folder.
type Attempt struct {
	ListDir string // the list directory
	ListID  string
	TaskID  string
	Parent  string
	N       int    // attempt number, the run folder's name
	Step    string // workflow step, if any
	Profile *config.Profile
	Prompt  string // the full prompt (prompt.md)
	Script  string // what the agent gets if not the prompt (exec: the content alone)
	Cwd     string
	Timeout time.Duration
	Spec    task.Spec         // model, permission mode, tools, system prompt
	Resume  string            // session to resume (claude)
	Session string            // a new session's id, given to the agent (claude --session-id; session.go)
	Sub     string            // a folder inside the run folder (a loop's judge), if any
	Fork    bool              // resume as a new session (--fork-session): a subagent inheriting its parent's
	Env     map[string]string // extra variables (TASKD_TRANSCRIPT, …)
	Files   map[string][]byte // extra files for the run folder (transcript.json)
	Budget  Budget            // turns and dollars the attempt may spend (watch.go)
	// OutputMax bounds each of the attempt's logs, in bytes (capped.go);
	// 0: the configuration's.
	OutputMax int64
	// NoResult: Run writes no result.json, the caller records the result
	// elsewhere (a worker sends it to its coordinator, and removes the
	// run folder).
	NoResult bool
	// Report is told the progress of a streaming agent (watch.go); nil:
	// nobody is.
	Report Reporter
	// Gate lets the agent start and is told when it has started and
	// exited. Unset, the agent starts at once.
	Gate Gate
	// Clock is the time a usage limit's reset ("resets 8pm") is read
	// against; nil: the wall clock.
	Clock func() time.Time
	// MadeDir is set when the attempt made its run folder (rather than
	// using one a previous run of the same attempt number left); started,
	// once its agent has started; stopped, to beforeStart's error when that
	// kept it from starting.
	MadeDir bool
	Started bool
	Stopped error
}

// A Gate stands between an attempt's prepared run folder and its agent:
// Enter waits until the agent may start (a concurrency slot, a check that
// its task still asks for it) and its error keeps the agent from starting;
// Started and Exited are told the moment the agent has started and exited
// (the slot can go to the next agent while this one's end is recorded).
type Gate interface {
	Enter(ctx context.Context) error
	Started(at time.Time)
	Exited()
}

// Local runs attempts as processes of this machine. It is safe for
// concurrent use.
type Local struct {
	// Environ, if set, stands for the daemon's environment, from which an
	// agent's is built (os.Environ() otherwise): taskd doctor checks the
	// agents with the environment of the daemon or of its service.
	Environ []string

	cfg      *config.Config
	log      *slog.Logger
	programs programCache // where agents' programs are on their PATH
}

// NewLocal returns a runner for cfg that logs to log.
func NewLocal(cfg *config.Config, log *slog.Logger) *Local {
	return &Local{cfg: cfg, log: log}
}

// How an attempt ended, besides its Result.
type Outcome int

const (
	Finished    Outcome = iota // the agent exited; Result says how it went
	TimedOut                   // killed at its timeout
	Cancelled                  // killed because metadata.taskd.cancel was set
	Interrupted                // killed because the daemon is stopping
	NotStarted                 // the agent could not be started (Result.Error says why)
	Paused                     // the agent met a usage limit (Result.Limit), or its profile is paused
	OverBudget                 // stopped, or stopped itself, past its turns or dollars (Result.Error)
)

// OutputLimit is what each of the attempt's logs keeps at most: its own
// OutputMax, else cfg's.
func (a *Attempt) OutputLimit(cfg *config.Config) int64 {
	return cmp.Or(a.OutputMax, cfg.OutputMax, config.DefaultOutputMax)
}

// Dir is the attempt's run folder.
func (a *Attempt) Dir() string {
	dir := area.RunDir(a.ListDir, a.TaskID, a.N)
	if a.Sub != "" {
		dir = filepath.Join(dir, a.Sub)
	}
	return dir
}

// outcomeNames are recorded in result.json for attempts that did not end on
// their own.
var outcomeNames = map[Outcome]string{TimedOut: "timed_out", Cancelled: "cancelled", NotStarted: "not_started", Paused: "paused", OverBudget: "over_budget"}

// OutcomeOf maps a recorded result back to its outcome.
func OutcomeOf(r Result) Outcome {
	for o, name := range outcomeNames {
		if r.Outcome == name {
			return o
		}
	}
	return Finished
}

// Causes for cancelling an attempt's context.
var (
	ErrCancelled   = errors.New("cancelled")
	ErrTimeout     = errors.New("timed out")
	ErrInterrupted = errors.New("daemon stopping")
	ErrTaskGone    = errors.New("task file removed") // or its list
	// ErrPaused keeps an agent from starting while its profile is paused
	// by a usage limit (a *PausedError says until when).
	ErrPaused = errors.New("its agent profile is paused by a usage limit")
)

// StoppedOutcome is how an attempt stopped for cause ends: cancelled,
// paused (its profile met a usage limit), or interrupted (the daemon
// stops, the list is refused).
func StoppedOutcome(cause error) Outcome {
	switch {
	case errors.Is(cause, ErrCancelled):
		return Cancelled
	case errors.Is(cause, ErrPaused):
		return Paused
	}
	return Interrupted
}

// StopOf is why an attempt that ended with out was stopped: errInterrupted
// or errCancelled, or nil if it was not.
func StopOf(out Outcome) error {
	switch out {
	case Interrupted:
		return ErrInterrupted
	case Cancelled:
		return ErrCancelled
	}
	return nil
}

// run executes the attempt: it writes prompt.md and cmd.json, starts the
// agent in its own process group with stdout and stderr going to files,
// waits for it (SIGTERM to the group on timeout, cancellation or shutdown,
// SIGKILL after the grace period), and writes result.json the moment it
// has exited. It never holds a task-file lock. ctx's cancellation cause
// (errCancelled, errInterrupted) says why an attempt was stopped.
func (r *Local) Run(ctx context.Context, a *Attempt) (Result, Outcome) {
	start := time.Now()
	dir := a.Dir()
	// The run folder, once made, is opened once for every file written
	// into it, result.json the last.
	var folder *fsroot.Dir
	defer func() {
		if folder != nil {
			folder.Close()
		}
	}()
	res, out := r.execAttempt(ctx, a, dir, &folder)
	if res.StartedAt != nil {
		// How long the agent ran: not the wait for its slot before.
		start = *res.StartedAt
	}
	res.DurationMs = time.Since(start).Milliseconds()
	if out != Finished && res.Error == "" {
		res.Error = map[Outcome]string{
			TimedOut:    fmt.Sprintf("timed out after %s", a.Timeout),
			Cancelled:   "cancelled",
			Interrupted: "interrupted: the daemon stopped while the agent ran",
		}[out]
	}
	if out != Finished {
		res.Success = false
		res.Outcome = outcomeNames[out]
	}
	// The result is persisted the moment the agent has exited, before the
	// task file records it: a daemon that dies in between finds it here,
	// or where it is kept while the run folder cannot take it (kept.go).
	// An attempt cut short by the daemon's own stop leaves no result, so
	// it is run again.
	if out != Interrupted && !a.NoResult {
		if kept, err := writeResultIn(folder, a.ListDir, dir, res); kept != "" {
			r.log.Warn("the run folder cannot take result.json: the result is kept elsewhere until its end is recorded", "task", a.TaskID, "path", dir, "kept", kept, "err", err)
		} else if err != nil {
			r.log.Warn("write result: it lives in memory only until its end is recorded", "task", a.TaskID, "path", dir, "err", err)
		}
	}
	return res, out
}

// execAttempt is Run but for result.json. It sets *opened to the run
// folder, open, for the caller to close.
func (r *Local) execAttempt(ctx context.Context, a *Attempt, dir string, opened **fsroot.Dir) (Result, Outcome) {
	// A task file may hold lone surrogates (a JavaScript string can); no
	// agent reads them as text, so each becomes U+FFFD in what it is sent
	// and in prompt.md, the record of it.
	a.Prompt = strings.ToValidUTF8(a.Prompt, "\uFFFD")
	a.Script = strings.ToValidUTF8(a.Script, "\uFFFD")
	argv, stdinText := a.argv()
	env := r.agentEnv(a, dir)
	base := a.ListDir
	cmdInfo := map[string]any{
		"argv": argv, "cwd": a.Cwd, "env": envNames(env), "profile": a.Profile.Name,
		"timeout": a.Timeout.String(), "step": a.Step, "attempt": a.N, "prompt": a.Profile.Prompt, "output": a.Profile.Output,
	}
	if s := cmp.Or(a.Resume, a.Session); s != "" && !a.Fork {
		cmdInfo["sessionId"] = s // known before the agent says it (session.go)
	}
	// record writes cmd.json, the record of how the agent is (to be)
	// started, replacing an earlier version whole.
	var folder *fsroot.Dir
	record := func() {
		err := fs.ErrClosed
		if folder != nil {
			err = writeJSONIn(folder, "cmd.json", cmdInfo)
		}
		if errors.Is(err, fs.ErrClosed) { // not made yet, or the run is over
			err = WriteJSONFile(base, filepath.Join(dir, "cmd.json"), cmdInfo)
		}
		if err != nil {
			r.log.Warn("write cmd.json", "task", a.TaskID, "path", dir, "err", err)
		}
	}
	fail := func(format string, args ...any) (Result, Outcome) {
		if held := notPrepared(a, args); held != nil {
			return *held, Interrupted
		}
		record()
		msg := fmt.Sprintf(format, args...)
		return Result{Success: false, ExitCode: -1, Error: msg, Summary: msg}, NotStarted
	}
	folder, made, err := mkdirRun(base, dir)
	a.MadeDir = made
	if held := notPrepared(a, []any{err}); held != nil {
		return *held, Interrupted
	}
	if err != nil && made {
		return fail("open the run folder: %v", err) // replaced as it was made
	}
	if err != nil {
		msg := fmt.Sprintf("create run folder: %v", err)
		return Result{Success: false, ExitCode: -1, Error: msg, Summary: msg}, NotStarted
	}
	*opened = folder
	ForgetKept(dir) // nor is one kept for an earlier run (kept.go)
	if !made {
		// A folder an earlier run of the same attempt number left (a task
		// dropped again with the same contents): its result is not this
		// attempt's, and a restart must not take it for one.
		if err := fsroot.Remove(base, filepath.Join(dir, "result.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail("remove the earlier run's result.json: %v", err)
		}
	}
	if !made {
		if err := ClearEarlierLogs(folder, base, dir); err != nil {
			return fail("remove the earlier run's logs: %v", err)
		}
	}
	// What the agent may read is in the run folder before it starts: its
	// prompt and the files of its prompt commands. All of it is made while
	// the job still waits for its slot. cmd.json, how the agent is
	// started, is written the moment it has started, with its process
	// group; before that only where a restart would learn from it
	// (earlyRecord).
	if err := writeNewFileIn(folder, "prompt.md", []byte(a.Prompt), made); err != nil {
		return fail("write prompt.md: %v", err)
	}
	for name, data := range a.Files {
		if err := writeNewFile(base, filepath.Join(dir, name), data); err != nil {
			return fail("write %s: %v", name, err)
		}
	}
	path, err := r.programs.lookPath(argv[0], env)
	if err != nil {
		return fail("agent profile %q: %v. Install it, or point the profile at it in %s: {\"profiles\": {%q: {\"command\": [\"/full/path/to/%s\", …]}}}",
			a.Profile.Name, err, r.cfg.FileName(), a.Profile.Name, filepath.Base(argv[0]))
	}
	if why := NotADirectory(a.Cwd); why != "" {
		return fail("working directory %q %s; set metadata.taskd.cwd to an existing directory", a.Cwd, why)
	}
	// The agent writes into pipes, whose other ends the daemon reads into
	// the logs, bounded (capped.go).
	limit := a.OutputLimit(r.cfg)
	// Each log is created at its first byte: an agent that says nothing
	// on one leaves no file for it.
	stdout := createCappedLogIn(folder, base, filepath.Join(dir, "stdout.log"), limit)
	defer stdout.Close()
	stderr := createCappedLogIn(folder, base, filepath.Join(dir, "stderr.log"), limit)
	defer stderr.Close()
	for i, arg := range argv {
		if strings.IndexByte(arg, 0) >= 0 {
			return fail("argument %d of the agent's command has a NUL byte (\\u0000), which no command line can carry; remove it from the prompt, the workflow step's command or the profile", i)
		}
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir, cmd.Env = a.Cwd, env
	if stdinText != "" {
		cmd.Stdin = strings.NewReader(stdinText)
	} else if null := devNull(); null != nil {
		cmd.Stdin = null // else exec opens the null device itself
	}
	early := earlyRecord(made, cmdInfo)
	if early {
		record()
	}
	gate := a.Gate
	if gate != nil {
		if err := gate.Enter(ctx); err != nil {
			a.Stopped = err
			return Result{Success: false, ExitCode: -1}, StoppedOutcome(err)
		}
	}
	// Everything the agent starts stays in its attempt's group, which is
	// killed as a whole when the agent exits or is stopped.
	grp := proc.Supervise().Group(marker(dir))
	if err := grp.Degraded(); err != nil {
		r.log.Warn("the attempt's processes are known by their environment only", "task", a.TaskID, "path", dir, "err", err)
	}
	if grp.Cgroup() == "" && (gate != nil || !early) {
		// Its cgroup would show a restart that the attempt went on to
		// start its agent (Entered); without one, cmd.json says so (and
		// is written before the start, as it is wherever attempts get
		// no cgroup: the group could not be made).
		if gate != nil {
			cmdInfo["entered"] = true
		}
		record()
	}
	pipes, err := newOutputPipes()
	if err != nil {
		grp.Close()
		return fail("make the agent's output pipes: %v", err)
	}
	cmd.Stdout, cmd.Stderr = pipes.outW, pipes.errW
	waited, err := startWait(cmd, grp)
	pipes.closeWriters() // the agent has them
	if err != nil {
		pipes.closeReaders()
		grp.Close()
		return fail("start %s: %v", argv[0], err)
	}
	a.Started = true
	startedAt := time.Now()
	pgid := cmd.Process.Pid
	// cmd.json records the process group first, and when its leader
	// started, and the attempt's cgroup: recovery kills a leftover agent
	// by them, and never a process that was given the pid since.
	cmdInfo["pid"] = pgid
	if start, boot, ok := procStart(pgid); ok {
		cmdInfo["startTime"], cmdInfo["boot"] = start, boot
	}
	if cg := grp.Cgroup(); cg != "" {
		cmdInfo["cgroup"] = cg
	}
	record()
	if gate != nil {
		gate.Started(startedAt)
	}

	var watch *Watcher
	var overBudget <-chan string
	if IsStream(a.Profile.Output) {
		watch = Watch(a, limit, func(session string) {
			cmdInfo["sessionId"] = session // for a resumption after a crash
			record()
		})
		overBudget = watch.OverBudget()
	}
	drained := pipes.drain(stdout, stderr, watch)
	var timeout <-chan time.Time
	if a.Timeout > 0 {
		t := time.NewTimer(a.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	out := Finished
	var waitErr error
	var over string
	select {
	case waitErr = <-waited:
	case over = <-overBudget:
		out = OverBudget
		waitErr = r.stopGroup(pgid, grp, waited)
	case <-timeout:
		out = TimedOut
		waitErr = r.stopGroup(pgid, grp, waited)
	case <-ctx.Done():
		out = Cancelled
		if errors.Is(context.Cause(ctx), ErrInterrupted) {
			out = Interrupted
		}
		waitErr = r.stopGroup(pgid, grp, waited)
	}
	// The leader is gone; whatever it left running goes too, wherever it
	// went. (cmd.json stays: recovery checks the group is gone or not
	// ours.)
	signalGroup(pgid, syscall.SIGKILL)
	if grp.Kill() {
		r.log.Debug("killed what the agent left running", "task", a.TaskID, "path", dir)
	}
	if err := grp.Close(); err != nil {
		r.log.Warn("remove the attempt's cgroup", "task", a.TaskID, "err", err)
	}
	if gate != nil {
		gate.Exited()
	}
	// Its writers gone, what is left in the pipes is read to the end; a
	// process that outlived the kill (one that left by clearing its
	// environment) does not hold the attempt.
	pipes.wait(drained, drainWait)
	cut := map[string]int64{}
	logs := endedLogs{base: base, dir: dir, folder: folder, received: map[string]int64{}}
	for name, l := range map[string]*cappedLog{"stdout.log": stdout, "stderr.log": stderr} {
		logs.received[name] = l.n
		n, err := l.Close()
		if n > 0 {
			cut[name] = n
		}
		if err != nil {
			r.log.Warn("the agent's output is incomplete: its log could not be written", "task", a.TaskID, "path", dir, "err", err)
		}
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
	res, out := a.ending(logs, watch, exitCode, out, over)
	if watch != nil && watch.TranscriptCut() > 0 {
		cut["transcript.log"] = watch.TranscriptCut()
	}
	if len(cut) > 0 {
		res.OutputCut = cut
	}
	res.StartedAt = &startedAt
	if tc := toolCounterOf(a.Profile); tc != nil && res.SessionID != "" && res.ToolInvocations == nil {
		// Transcript lines carry whole-second precision in places; a
		// second's slack keeps this attempt's first message in.
		if n, ok := tc.CountTools(env, res.SessionID, startedAt.Add(-time.Second)); ok {
			res.ToolInvocations = &n
		}
	}
	return res, out
}

// earlyRecord reports whether cmd.json is written before the agent starts,
// as well as once it has: only where what a restart decides may read it
// then. That is where attempts get no cgroup of their own (Entered reads
// its entered); where cmd.json names a session (given to the agent, or
// one it resumes), which an attempt interrupted before or as its agent
// started passes on to the next (Session); and in a run folder an earlier
// run of the same attempt number left, whose cmd.json, naming that run's
// process, must not stand for this attempt's (StartedIn). Elsewhere a
// restart decides the same without it: the attempt's cgroup, made just
// before its agent starts, says whether it went on to start it
// (Entered), and a cmd.json without a process group says no more than
// none does (StartedIn, KillLeftover).
func earlyRecord(made bool, cmdInfo map[string]any) bool {
	if _, ok := cmdInfo["sessionId"]; ok || !made {
		return true
	}
	return proc.Supervise().Mode() != proc.ByCgroup
}

// stopGroup asks the agent's process group to stop (SIGTERM), then kills
// it and the rest of the attempt's group (SIGKILL) if the leader has not
// exited after the grace period. It returns the Wait error.
func (r *Local) stopGroup(pgid int, grp *proc.Group, waited <-chan error) error {
	signalGroup(pgid, syscall.SIGTERM)
	t := time.NewTimer(r.cfg.Grace)
	defer t.Stop()
	select {
	case err := <-waited:
		return err
	case <-t.C:
		signalGroup(pgid, syscall.SIGKILL)
		grp.Kill()
		return <-waited
	}
}

// argv builds the command line for the attempt and the text for its stdin.
func (a *Attempt) argv() (argv []string, stdin string) {
	p := a.Profile
	argv = append(argv, p.Command...)
	if k := KindOf(p); k != nil {
		argv = k.Args(argv, a) // the task's fields as the kind's flags
	}
	text := a.Prompt
	if a.Script != "" {
		text = a.Script
	}
	if p.Prompt == "arg" {
		return append(argv, text), ""
	}
	return argv, text
}

// NotADirectory says why dir (with its links followed) is no directory an
// agent can start in: "does not exist", what it is instead, or the error
// that stops it; "" when it is a directory.
func NotADirectory(dir string) string {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case err != nil:
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err // the path is said already
		}
		return fmt.Sprintf("cannot be used: %v", err)
	case !fi.IsDir():
		return "is " + fsroot.KindOf(fi.Mode()) + ", not a directory"
	}
	return ""
}

// endOptions ends the options of a's command line with "--" when its
// prompt follows as an argument: a kind whose program takes "--" so (the
// claude, codex and opencode commands) calls it last in its Args, so that
// a prompt that begins with "-" (a Markdown list, "--dangerously-…") is
// the prompt and never one of the program's options.
func endOptions(argv []string, a *Attempt) []string {
	if a.Profile != nil && a.Profile.Prompt == "arg" {
		return append(argv, "--")
	}
	return argv
}

// baseEnv are the variables every agent inherits from the daemon, besides
// its profile's list and taskd's own: the allow-list taskd's git commands
// get too (package allowenv).
var baseEnv = allowenv.Base

// agentEnv builds the agent's environment: only the base variables, the
// profile's list (NAME or PREFIX*), taskd's own TASKD_* variables, and PATH
// with taskd's directory first, so agents can run taskd's in-execution
// commands.
func (r *Local) agentEnv(a *Attempt, runDir string) []string {
	// The profile's entries are names or NAME* prefixes passed through from
	// the daemon's environment, or NAME=value set as given (over the
	// daemon's value).
	allow := append([]string{}, baseEnv...)
	set := map[string]string{}
	for _, e := range a.Profile.Env {
		if name, value, ok := strings.Cut(e, "="); ok {
			set[name] = value
		} else {
			allow = append(allow, e)
		}
	}
	daemonEnv := r.Environ
	if daemonEnv == nil {
		daemonEnv = os.Environ()
	}
	var env []string
	path := ""
	for _, kv := range daemonEnv {
		name, value, _ := strings.Cut(kv, "=")
		if name == "PATH" {
			path = value
		}
		if name == "PATH" || strings.HasPrefix(name, "TASKD_") {
			continue
		}
		if _, ok := set[name]; ok {
			continue
		}
		if allowenv.Match(name, allow) {
			env = append(env, kv)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		env = append(env, name+"="+set[name])
	}
	if r.cfg.Executable != "" {
		path = filepath.Dir(r.cfg.Executable) + string(os.PathListSeparator) + path
	}
	// TASKD_RUN_DIR goes first: recovery recognises a leftover agent by it.
	env = append([]string{"TASKD_RUN_DIR=" + runDir}, env...)
	env = append(env,
		"PATH="+path,
		"TASKD_ROOT="+r.cfg.Root,
		"TASKD_LIST="+a.ListID,
		"TASKD_TASK_ID="+a.TaskID,
		"TASKD_TASK_FILE="+filepath.Join(a.ListDir, a.TaskID+".json"),
		"TASKD_STEP="+a.Step,
		"TASKD_PARENT="+a.Parent,
		"TASKD_ATTEMPT="+strconv.Itoa(a.N),
	)
	if r.cfg.ConfigPath != "" {
		if _, err := os.Stat(r.cfg.ConfigPath); err == nil {
			// taskd push, delegate, … read the daemon's configuration.
			env = append(env, "TASKD_CONFIG="+r.cfg.ConfigPath)
		}
	}
	for k, v := range a.Env {
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
