// Package taskdrun runs `taskd run` for a benchmark and feeds it tasks:
// it starts the daemon on a root with a list named bench, waits until the
// daemon says it is ready, drops task files into the list the way a
// producer should (written aside, then renamed in), counts the tasks that
// succeeded, and stops the daemon. The daemon gets a runtime directory of
// its own (XDG_RUNTIME_DIR, for its status file and kept results),
// removed when it stops: a benchmark leaves nothing in the user's.
package taskdrun

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/taskd/taskd/internal/syncbuf"
)

// Options say how to start the daemon.
type Options struct {
	Bin      string   // the taskd binary
	Root     string   // the root it serves; its list bench is made
	Config   string   // the configuration file
	LogLevel string   // --log-level
	Env      []string // added to this process's environment
	// Ready says when the daemon is ready; the default is when it has
	// logged "taskd started" (at the info level).
	Ready func(*Daemon) bool
	// Timeout bounds the wait for Ready.
	Timeout time.Duration
	// Echo, if set, is also given the daemon's stderr as it comes.
	Echo io.Writer
}

// A Daemon is a running `taskd run`.
type Daemon struct {
	Cmd     *exec.Cmd
	Runtime string          // its runtime directory
	List    string          // the list bench of its root
	Stderr  *syncbuf.Buffer // what it wrote to stderr so far
	Started time.Duration   // from its start until it was ready
}

// Start starts the daemon and waits until it is ready; if it is not
// within the timeout, it is stopped and what it wrote is in the error.
func Start(o Options) (*Daemon, error) {
	list := filepath.Join(o.Root, "bench")
	if err := os.MkdirAll(list, 0o700); err != nil {
		return nil, err
	}
	runtime, err := os.MkdirTemp("", "taskd-bench-runtime-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Bin, "run", "--root", o.Root, "--config", o.Config, "--log-level", o.LogLevel)
	cmd.Env = append(append(os.Environ(), "XDG_RUNTIME_DIR="+runtime), o.Env...)
	d := &Daemon{Cmd: cmd, Runtime: runtime, List: list, Stderr: &syncbuf.Buffer{}}
	cmd.Stderr = d.Stderr
	if o.Echo != nil {
		cmd.Stderr = io.MultiWriter(d.Stderr, o.Echo)
	}
	ready := o.Ready
	if ready == nil {
		ready = func(d *Daemon) bool { return strings.Contains(d.Stderr.String(), "taskd started") }
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(runtime)
		return nil, err
	}
	if err := WaitFor(o.Timeout, time.Millisecond, func() bool { return ready(d) }); err != nil {
		d.Stop()
		return nil, fmt.Errorf("taskd did not start: %w\n%s", err, d.Stderr)
	}
	d.Started = time.Since(t0)
	return d, nil
}

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.Cmd.Process.Pid }

// Stop stops the daemon as a user does (SIGTERM), waits for it, and
// removes its runtime directory.
func (d *Daemon) Stop() {
	d.Cmd.Process.Signal(syscall.SIGTERM)
	d.Cmd.Wait()
	os.RemoveAll(d.Runtime)
}

// Drop writes a task file into a dot-file of list and renames it in as
// id.json.
func Drop(list, id string, data []byte) error {
	tmp := filepath.Join(list, "."+id+".drop")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(list, id+".json"))
}

// Succeeded is how many tasks of list have succeeded, by its event log.
func Succeeded(list string) int {
	data, _ := os.ReadFile(filepath.Join(list, ".taskd", "events.jsonl"))
	return bytes.Count(data, []byte(`"type":"TaskSucceeded"`))
}

// WaitFor looks at cond every period until it holds, or returns an error
// once timeout has passed.
func WaitFor(timeout, period time.Duration, cond func() bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(period)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not done after %s", timeout)
		case <-tick.C:
		}
	}
	return nil
}
