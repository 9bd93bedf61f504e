//go:build !linux && !darwin

package install

import (
	"errors"
	"os"
)

func homeDir() (string, error) { return os.UserHomeDir() }

// newPlatform fails: taskd installs user services on Linux and macOS only.
func newPlatform(h host) (platform, error) {
	return nil, errors.New("taskd installs its service with systemd (Linux) or launchd (macOS) only; " +
		"elsewhere, run 'taskd run' under your system's service manager")
}
