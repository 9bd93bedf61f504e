package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kardianos/service"
)

// ErrNotInstalled is wrapped by the errors of Start and Stop when the
// service is not installed.
var ErrNotInstalled = errors.New("the taskd service is not installed")

// errRoot is returned to root (euid 0), whose user service would live in
// root's home and run as root.
var errRoot = errors.New("refusing to run as root (euid 0): taskd install, uninstall, start, stop and service-status " +
	"manage the user service of the user who runs them; run them as the user the service is for, without sudo")

// Flags are the flags of taskd run that the service passes to it.
type Flags struct {
	Root   string // the task root; must be absolute
	Config string // the config file; absolute, or empty for the default
}

// Service manages taskd's user service on this machine: a systemd --user
// unit on Linux, a launchd agent on macOS. A Service is not safe for
// concurrent use.
type Service struct {
	plat       platform
	euid       int
	exists     func(path string) bool
	newManager func(system string, c *service.Config) (manager, error)
	resolve    func(exe string, allowTemp bool) (string, error) // resolveExecutable
	exe        string                                           // the binary to install; empty: the running one
	allowTemp  bool                                             // accept a binary under the temporary directory (tests)
}

// New returns the Service of the current user on this system. It fails on
// systems other than Linux and macOS, and when the user's home directory
// is unknown.
func New() (*Service, error) {
	h, err := currentHost()
	if err != nil {
		return nil, err
	}
	p, err := newPlatform(h)
	if err != nil {
		return nil, err
	}
	return &Service{
		plat:       p,
		euid:       os.Geteuid(),
		exists:     fileExists,
		newManager: kardianosManager,
		resolve:    resolveExecutable,
	}, nil
}

// File returns the path of the unit or plist file.
func (s *Service) File() string { return s.plat.file() }

// spec checks the flags and the binary, and returns what the service runs
// and the kardianos configuration that installs it.
func (s *Service) spec(f Flags) (spec, *service.Config, error) {
	if s.euid == 0 {
		return spec{}, nil, errRoot
	}
	if !filepath.IsAbs(f.Root) || (f.Config != "" && !filepath.IsAbs(f.Config)) {
		return spec{}, nil, fmt.Errorf("root %q and config %q must be absolute paths", f.Root, f.Config)
	}
	exe, err := s.resolve(s.exe, s.allowTemp)
	if err != nil {
		return spec{}, nil, err
	}
	sp := spec{exe: exe, root: filepath.Clean(f.Root)}
	if f.Config != "" {
		sp.config = filepath.Clean(f.Config)
	}
	for _, p := range [][2]string{{"the taskd binary's path", sp.exe}, {"the task root", sp.root}, {"the config file's path", sp.config}} {
		if err := checkPath(p[0], p[1]); err != nil {
			return spec{}, nil, err
		}
	}
	c, err := s.plat.config(sp)
	if err != nil {
		return spec{}, nil, err
	}
	return sp, c, nil
}

// runLine is the taskd run command line for people, without a manager.
func runLine(sp spec) string {
	return ShellLine(append([]string{"taskd"}, sp.runArgs()...)...)
}

// DryRun writes to w what Install would do for f: the file's path and
// content, and the commands it would run, one per line. It changes
// nothing. It fails where Install would fail before changing anything,
// except that it does not look for the service manager.
func (s *Service) DryRun(w io.Writer, f Flags) error {
	_, c, err := s.spec(f)
	if err != nil {
		return err
	}
	text, err := s.plat.render(c)
	if err != nil {
		return fmt.Errorf("render %s: %w", s.plat.file(), err)
	}
	verb := "write"
	replace := s.exists(s.plat.file())
	if replace {
		verb = "replace"
	}
	fmt.Fprintf(w, "taskd install would %s %s:\n\n%s\n", verb, s.plat.file(), text)
	fmt.Fprintf(w, "and run, in order:\n\n")
	for _, line := range s.plat.plan(replace) {
		fmt.Fprintln(w, line)
	}
	return nil
}

// manager returns the kardianos service for c, or for the platform's
// configuration without a binary when c is nil (enough to stop, start,
// query and remove the service). It fails when there is no service
// manager (an error wrapping ErrNoServiceManager).
func (s *Service) manager(ctx context.Context, c *service.Config, run string) (manager, error) {
	if err := s.plat.noManager(ctx); err != nil {
		var nm *NoServiceManagerError
		if errors.As(err, &nm) {
			nm.Run = run
		}
		return nil, err
	}
	if c == nil {
		var err error
		if c, err = s.plat.config(spec{}); err != nil {
			return nil, err
		}
	}
	return s.newManager(s.plat.system(), c)
}

// Install installs the service for f and starts it, replacing (stopping,
// removing, installing, starting) a service installed before, as after an
// upgrade of taskd. It reports to w where the file is, how to read the
// logs, and problems such as lingering being off. It fails before changing
// anything when run as root, when the binary is a temporary build, and
// when there is no service manager (an error wrapping ErrNoServiceManager);
// a failure after that says what state it left.
func (s *Service) Install(ctx context.Context, w io.Writer, f Flags) error {
	sp, c, err := s.spec(f)
	if err != nil {
		return err
	}
	m, err := s.manager(ctx, c, runLine(sp))
	if err != nil {
		return err
	}
	file, kind := s.plat.file(), s.plat.kind()
	replace := s.exists(file)
	if replace {
		// A failure to stop (it was not running) is no reason to stop
		// here; if the manager is in trouble, Uninstall says so.
		_ = s.plat.stop(ctx, m)
		if err := m.Uninstall(); err != nil {
			return fmt.Errorf("remove the installed %s %s: %w", kind, file, err)
		}
	}
	if err := s.plat.prepare(); err != nil {
		return err
	}
	if err := m.Install(); err != nil {
		if replace {
			return fmt.Errorf("install %s %s (the previous one was removed): %w", kind, file, err)
		}
		return fmt.Errorf("install %s %s: %w", kind, file, err)
	}
	if replace {
		fmt.Fprintf(w, "Replaced the installed taskd user service: %s\n", file)
	} else {
		fmt.Fprintf(w, "Installed the taskd user service: %s\n", file)
	}
	fmt.Fprintf(w, "It runs: %s\n", ShellLine(append([]string{sp.exe}, sp.runArgs()...)...))
	if err := s.plat.start(ctx, m); err != nil {
		return fmt.Errorf("start the service (it is installed; see its logs: %s): %w", s.plat.logs(), err)
	}
	if st, err := m.Status(); err == nil && st == service.StatusRunning {
		fmt.Fprintln(w, "Started: the service is running.")
	} else {
		fmt.Fprintf(w, "Started, but the service is not running now; see its logs.\n")
	}
	for _, line := range s.plat.notes() {
		fmt.Fprintln(w, line)
	}
	if !s.exists(sp.root) {
		fmt.Fprintf(w, "Note: the task root %s does not exist yet.\n", sp.root)
	}
	if warn := s.plat.warnings(ctx); len(warn) > 0 {
		fmt.Fprintf(w, "\nwarning: %s\n", warn[0])
		for _, line := range warn[1:] {
			fmt.Fprintf(w, "%s\n", line)
		}
	}
	return nil
}
