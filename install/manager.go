package install

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/kardianos/service"

	"github.com/taskd/taskd/internal/proc"
)

// manager is the part of kardianos's service.Service that taskd uses. Its
// methods are called directly, never through service.Control, which wraps
// errors with %v and so would hide service.ErrNotInstalled from errors.Is.
type manager interface {
	// Install writes the unit or plist file; it fails if the file exists.
	// On systemd it also enables the unit and reloads the manager.
	Install() error
	// Uninstall removes the file (on systemd after disabling the unit).
	Uninstall() error
	Start() error
	Stop() error
	// Status reports whether the service runs; service.ErrNotInstalled
	// when the manager does not know it.
	Status() (service.Status, error)
}

var _ manager = service.Service(nil)

// kardianosManager returns kardianos's service for c under the System named
// system ("linux-systemd", "darwin-launchd"). The System is picked by name,
// not by kardianos's detection, which on a machine without systemd as PID 1
// would choose a SysV init script: taskd only ever installs user services.
func kardianosManager(system string, c *service.Config) (manager, error) {
	for _, sys := range service.AvailableSystems() {
		if sys.String() == system {
			return sys.New(noProgram{}, c)
		}
	}
	return nil, fmt.Errorf("service manager %s is not supported on this system", system)
}

// noProgram satisfies service.Interface. taskd never runs under
// kardianos's Run: the unit execs taskd run directly.
type noProgram struct{}

func (noProgram) Start(service.Service) error { return nil }
func (noProgram) Stop(service.Service) error  { return nil }

// runner runs one of the service manager's command-line tools (systemctl,
// loginctl, launchctl) for what kardianos does not do, and returns its
// combined output, trimmed. The output is returned also when the command
// fails; the error then names the command and includes the output.
type runner func(ctx context.Context, name string, args ...string) (string, error)

// runCommand is the runner that starts processes.
func runCommand(ctx context.Context, name string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := proc.Run(cmd)
	s := strings.TrimSpace(out.String())
	if err != nil {
		line := ShellLine(append([]string{name}, args...)...)
		if s != "" {
			return s, fmt.Errorf("%s: %w: %s", line, err, s)
		}
		return s, fmt.Errorf("%s: %w", line, err)
	}
	return s, nil
}

// fileExists reports whether path names an existing file system entry.
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
