package install

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kardianos/service"
)

// fakeSystem stands in for a machine: its files, its commands and a
// service manager. It records, in order, every manager call and command.
type fakeSystem struct {
	files   map[string]bool   // paths that exist
	missing map[string]bool   // commands not on PATH
	out     map[string]string // output of commands, by command line
	fail    map[string]error  // failing manager calls ("Start") and commands
	running bool
	file    string // the unit or plist file the manager writes
	calls   []string
}

func newFakeSystem() *fakeSystem {
	return &fakeSystem{
		files: map[string]bool{
			"/run/systemd/system":       true,
			"/home/alice/.claude/tasks": true,
		},
		out: map[string]string{
			"systemctl --user is-system-running": "running",
			"loginctl show-user alice -p Linger": "Linger=yes",
		},
		missing: map[string]bool{},
		fail:    map[string]error{},
	}
}

func (f *fakeSystem) host(h host) host {
	h.run = f.run
	h.lookPath = func(file string) (string, error) {
		if f.missing[file] {
			return "", fmt.Errorf("exec: %q: executable file not found in $PATH", file)
		}
		return "/usr/bin/" + file, nil
	}
	h.exists = func(path string) bool { return f.files[path] }
	h.mkdirAll = func(path string) error {
		f.calls = append(f.calls, "mkdir -p "+path)
		f.files[path] = true
		return nil
	}
	return h
}

func (f *fakeSystem) run(ctx context.Context, name string, args ...string) (string, error) {
	line := ShellLine(append([]string{name}, args...)...)
	f.calls = append(f.calls, "run "+line)
	if err := f.fail[line]; err != nil {
		return f.out[line], fmt.Errorf("%s: %w: %s", line, err, f.out[line])
	}
	switch {
	case name == "launchctl" && args[0] == "bootstrap":
		f.running = true
	case name == "launchctl" && args[0] == "bootout":
		f.running = false
	}
	return f.out[line], nil
}

// service returns a Service on plat (whose host must come from f.host),
// for user 1000, installing go/bin/taskd in the home directory.
func (f *fakeSystem) service(plat platform) *Service {
	f.file = plat.file()
	home := "/home/alice"
	if a, ok := plat.(*launchdAgent); ok {
		home = a.home
	}
	return &Service{
		plat:   plat,
		euid:   1000,
		exists: func(path string) bool { return f.files[path] },
		newManager: func(system string, c *service.Config) (manager, error) {
			if system != plat.system() {
				return nil, fmt.Errorf("system %s, want %s", system, plat.system())
			}
			return (*fakeManager)(f), nil
		},
		exe:     home + "/go/bin/taskd",
		resolve: func(exe string, allowTemp bool) (string, error) { return exe, nil },
	}
}

// fakeManager is fakeSystem's service manager, behaving as kardianos's
// does: Install fails when the file exists, Status reports
// service.ErrNotInstalled when it does not.
type fakeManager fakeSystem

var _ manager = (*fakeManager)(nil)

func (m *fakeManager) call(name string) error {
	m.calls = append(m.calls, "manager "+name)
	return m.fail[name]
}

func (m *fakeManager) Install() error {
	if m.files[m.file] {
		return fmt.Errorf("Init already exists: %s", m.file)
	}
	if err := m.call("Install"); err != nil {
		return err
	}
	m.files[m.file] = true
	return nil
}

func (m *fakeManager) Uninstall() error {
	if err := m.call("Uninstall"); err != nil {
		return err
	}
	delete(m.files, m.file)
	return nil
}

func (m *fakeManager) Start() error {
	if err := m.call("Start"); err != nil {
		return err
	}
	m.running = true
	return nil
}

func (m *fakeManager) Stop() error {
	if err := m.call("Stop"); err != nil {
		return err
	}
	m.running = false
	return nil
}

func (m *fakeManager) Status() (service.Status, error) {
	m.calls = append(m.calls, "manager Status")
	switch {
	case m.fail["Status"] != nil:
		return service.StatusUnknown, m.fail["Status"]
	case !m.files[m.file]:
		return service.StatusUnknown, service.ErrNotInstalled
	case m.running:
		return service.StatusRunning, nil
	}
	return service.StatusStopped, nil
}

// transcript renders what happened for a golden file: the calls, the
// output and the error.
func (f *fakeSystem) transcript(out string, err error) string {
	var b strings.Builder
	b.WriteString("calls:\n")
	for _, c := range f.calls {
		b.WriteString("  " + c + "\n")
	}
	b.WriteString("output:\n" + out)
	if err != nil {
		b.WriteString("error:\n" + err.Error() + "\n")
	}
	return b.String()
}

func fakeErr(msg string) error { return errors.New(msg) }

func mustNot(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
