package install

import (
	"errors"
	"os"
	"os/user"
)

// homeDir is where kardianos puts a launch agent: the user database's home
// directory, else $HOME, + Library/LaunchAgents.
func homeDir() (string, error) {
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		return u.HomeDir, nil
	}
	if home := os.Getenv("HOME"); home != "" {
		return home, nil
	}
	return "", errors.New("find the home directory: neither the user database nor $HOME has it")
}

// newPlatform returns the platform of this system: a launchd user agent.
func newPlatform(h host) (platform, error) {
	return &launchdAgent{host: h, label: launchdLabel}, nil
}
