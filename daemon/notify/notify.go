// Package notify runs the configured notification command (the
// configuration's "notify") when a task needs a person, fails, or — if
// asked — succeeds: once per such change, with the task in the command's
// environment. Commands run one at a time on a goroutine of their own,
// each bounded by the timeout, in a process group of their own that is
// killed when the time is up; a failure is logged. Send never blocks: a
// notice that finds the queue full is dropped, and logged.
// docs/configuration.md documents the command and its variables.
package notify

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/internal/proc"
)

// A Notice is one change of a task that the command is told of.
type Notice struct {
	List, ID, Subject string
	State             string // needs_human, failed, timed_out, stopped or succeeded
	Reason            string // why it needs a person, or why it failed
	// Summary is what the agent's latest attempt said it did, and
	// CostUSD what that attempt cost (nil: not reported).
	Summary string
	CostUSD *float64
	File    string // the task file
	Root    string // the root of task lists
}

// queueSize bounds the notices waiting for the command.
const queueSize = 64

// A Notifier runs the command for each notice it is sent.
type Notifier struct {
	cfg   *config.Notify
	log   *slog.Logger
	queue chan Notice
	ctx   context.Context
	stop  context.CancelFunc
	done  chan struct{}
	once  sync.Once
}

// New starts a notifier for cfg, or returns nil (which sends nothing)
// when no command is configured.
func New(cfg *config.Notify, log *slog.Logger) *Notifier {
	if cfg == nil || len(cfg.Command) == 0 {
		return nil
	}
	ctx, stop := context.WithCancel(context.Background())
	n := &Notifier{cfg: cfg, log: log, queue: make(chan Notice, queueSize), ctx: ctx, stop: stop, done: make(chan struct{})}
	go n.run()
	return n
}

// Wants reports whether a task that entered state is notified.
func (n *Notifier) Wants(state string) bool {
	if n == nil {
		return false
	}
	switch state {
	case "needs_human", "failed", "timed_out", "stopped":
		return true
	case "succeeded":
		return n.cfg.Succeeded
	}
	return false
}

// Send queues nt for the command, unless the queue is full.
func (n *Notifier) Send(nt Notice) {
	if n == nil {
		return
	}
	select {
	case n.queue <- nt:
	default:
		n.log.Warn("notification dropped: too many waiting", "list", nt.List, "task", nt.ID, "state", nt.State)
	}
}

// Close stops taking notices and waits for those queued, at most one
// timeout; then the command under way is killed and the rest dropped.
func (n *Notifier) Close() {
	if n == nil {
		return
	}
	n.once.Do(func() { close(n.queue) })
	select {
	case <-n.done:
	case <-time.After(n.cfg.Timeout):
		n.stop()
		<-n.done
	}
}

func (n *Notifier) run() {
	defer close(n.done)
	for nt := range n.queue {
		if n.ctx.Err() != nil {
			n.log.Warn("notification dropped: the daemon stopped", "list", nt.List, "task", nt.ID, "state", nt.State)
			continue
		}
		n.notify(nt)
	}
}

// notify runs the command for nt and logs how it went.
func (n *Notifier) notify(nt Notice) {
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.cfg.Command[0], n.cfg.Command[1:]...)
	cmd.Env = append(environ(),
		"TASKD_ROOT="+nt.Root, "TASKD_LIST="+nt.List, "TASKD_TASK_ID="+nt.ID, "TASKD_TASK_FILE="+nt.File,
		"TASKD_SUBJECT="+oneLine(nt.Subject), "TASKD_STATE="+nt.State, "TASKD_REASON="+oneLine(nt.Reason),
		"TASKD_SUMMARY="+oneLine(nt.Summary))
	if nt.CostUSD != nil {
		cmd.Env = append(cmd.Env, "TASKD_COST_USD="+strconv.FormatFloat(*nt.CostUSD, 'f', -1, 64))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := proc.Run(cmd)
	if ctx.Err() == context.DeadlineExceeded {
		n.log.Warn("notification command timed out", "command", n.cfg.Command[0], "timeout", n.cfg.Timeout, "list", nt.List, "task", nt.ID)
		return
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// The command itself succeeded; a process it left in the
		// background still holds its output, which is not waited for.
		n.log.Debug("notified; a process the command started kept its output open", "list", nt.List, "task", nt.ID, "state", nt.State)
		return
	}
	if err != nil {
		n.log.Warn("notification command failed", "command", n.cfg.Command[0], "err", err, "output", tail(out.String()), "list", nt.List, "task", nt.ID)
		return
	}
	n.log.Debug("notified", "list", nt.List, "task", nt.ID, "state", nt.State)
}

// environ is the daemon's environment without taskd's own variables,
// which the notice sets.
func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TASKD_") {
			env = append(env, kv)
		}
	}
	return env
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 1000 {
		s = strings.ToValidUTF8(s[:1000], "")
	}
	return s
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 500 {
		s = s[len(s)-500:]
	}
	return s
}
