package install

import (
	"context"
	"fmt"
	"strings"

	"github.com/kardianos/service"
)

// spec is what the service runs: the taskd binary and the flags of taskd run.
type spec struct {
	exe    string // absolute path of the taskd binary, symlinks resolved
	root   string // absolute task root, passed as --root
	config string // absolute config file, passed as --config; empty: none
}

// runArgs are the arguments of the binary in the service: taskd run with
// the chosen flags, and nothing else.
func (sp spec) runArgs() []string {
	args := []string{"run", "--root", sp.root}
	if sp.config != "" {
		args = append(args, "--config", sp.config)
	}
	return args
}

// ShellLine renders argv for a person to read or paste into a POSIX shell.
func ShellLine(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkPath refuses a path that no unit or plist can carry.
func checkPath(what, p string) error {
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%s %q contains a control character; a service file cannot hold it", what, p)
		}
	}
	return nil
}

// host is what a platform needs from the machine; tests replace all of it.
type host struct {
	home     string // the user's home directory
	user     string // the user's login name
	uid      int    // the user's id
	run      runner
	lookPath func(file string) (string, error)
	exists   func(path string) bool
	mkdirAll func(path string) error
}

// A platform is one service manager: systemd --user or launchd. Rendering
// (config, render, plan, notes) is pure; the rest talks to the manager.
type platform interface {
	// system names the kardianos/service System that manages the platform.
	system() string
	// kind says what the file is, for messages: "unit", "agent".
	kind() string
	// file is the absolute path of the unit or plist file.
	file() string
	// config is the kardianos configuration that installs sp, with taskd's
	// own template.
	config(sp spec) (*service.Config, error)
	// render returns the file kardianos writes for c, byte for byte.
	render(c *service.Config) (string, error)
	// plan lists, in order, the commands install runs that change
	// something, with file operations as shell comments. replace says that
	// a file is already installed and is replaced.
	plan(replace bool) []string
	// logs says how to read the service's logs.
	logs() string
	// notes are what install prints after success: logs and environment.
	notes() []string
	// noManager returns a *NoServiceManagerError when there is no service
	// manager to talk to, and nil otherwise.
	noManager(ctx context.Context) error
	// prepare creates what the service needs before Install (directories).
	prepare() error
	// start and stop start and stop the installed service through m,
	// falling back to the manager's own tools where kardianos's way fails.
	start(ctx context.Context, m manager) error
	stop(ctx context.Context, m manager) error
	// warnings are problems to tell the user about after install, such as
	// lingering being off. Failing to check is itself a warning.
	warnings(ctx context.Context) []string
}
