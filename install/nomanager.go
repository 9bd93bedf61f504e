package install

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoServiceManager is wrapped by the errors of Service's methods when
// there is no service manager to hold a user service: on Linux no systemd
// user instance (a container, a system booted with another init, a shell
// without the user's session), on macOS no launchctl.
var ErrNoServiceManager = errors.New("no service manager")

// NoServiceManagerError says why there is no service manager and what to
// run instead. Its message is meant for people and spans several lines.
type NoServiceManagerError struct {
	Manager string // the manager taskd looked for: "systemd", "launchd"
	Reason  string // why it is not there
	Hint    string // how to reach it, if there may be a way; or empty
	Run     string // the command that runs the daemon without a manager
}

func (e *NoServiceManagerError) Error() string {
	run := e.Run
	if run == "" {
		run = "taskd run"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no service manager for a user service: %s.\n", e.Reason)
	if e.Hint != "" {
		b.WriteString(e.Hint + "\n")
	}
	fmt.Fprintf(&b, "Without one, run the daemon yourself, in the foreground:\n\t%s\n", run)
	fmt.Fprintf(&b, "or in the background, logging to a file:\n\tnohup %s >>\"$HOME/taskd.log\" 2>&1 &\n", run)
	b.WriteString("In a container, make that command the container's command (or a service of its init system), so that the container runtime restarts it.")
	return b.String()
}

func (e *NoServiceManagerError) Unwrap() error { return ErrNoServiceManager }
