package config

import (
	"errors"
	"fmt"
	"time"
)

// NotifySpec is the configuration's "notify": a command run when a task
// needs a person or fails (and, with "succeeded", when one succeeds),
// with the task in its environment (docs/configuration.md):
//
//	"notify": {"command": ["notify-send", "taskd"], "succeeded": false, "timeout": "10s"}
type NotifySpec struct {
	Command   []string `json:"command"`
	Succeeded bool     `json:"succeeded,omitempty"`
	Timeout   string   `json:"timeout,omitempty"`
}

// Notify is the notification command, compiled.
type Notify struct {
	Command   []string
	Succeeded bool
	Timeout   time.Duration
}

// DefaultNotifyTimeout bounds a notification command that sets no
// timeout.
const DefaultNotifyTimeout = 10 * time.Second

func (n *NotifySpec) validate() error {
	if n == nil {
		return nil
	}
	if len(n.Command) == 0 || n.Command[0] == "" {
		return errors.New(`"command" must name the program to run, such as ["notify-send", "taskd"]`)
	}
	if n.Timeout != "" {
		if d, err := time.ParseDuration(n.Timeout); err != nil || d <= 0 {
			return fmt.Errorf(`"timeout" %q is not a positive duration such as "10s"`, n.Timeout)
		}
	}
	return nil
}

func (n *NotifySpec) compile() *Notify {
	if n == nil || len(n.Command) == 0 {
		return nil
	}
	return &Notify{Command: append([]string(nil), n.Command...), Succeeded: n.Succeeded, Timeout: durationOr(n.Timeout, DefaultNotifyTimeout)}
}
