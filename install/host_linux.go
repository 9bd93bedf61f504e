package install

import (
	"fmt"
	"os"
)

// homeDir is where kardianos puts a user unit: os.UserHomeDir (that is,
// $HOME) + .config/systemd/user.
func homeDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the home directory: %w", err)
	}
	return home, nil
}

// newPlatform returns the platform of this system: systemd --user.
func newPlatform(h host) (platform, error) {
	return &systemdUnit{host: h, name: "taskd"}, nil
}
