package install

import (
	"os"
	"os/exec"
	"os/user"
)

// currentHost describes the current user on this machine, with the real
// runner and file system probes.
func currentHost() (host, error) {
	home, err := homeDir()
	if err != nil {
		return host{}, err
	}
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return host{
		home:     home,
		user:     name,
		uid:      os.Getuid(),
		run:      runCommand,
		lookPath: exec.LookPath,
		exists:   fileExists,
		mkdirAll: func(path string) error { return os.MkdirAll(path, 0o755) },
	}, nil
}
