package install

import (
	"context"
	"errors"
	"strings"
	"testing"
)

var noManagerTests = []struct {
	name  string
	plat  func(*fakeSystem) platform
	setup func(f *fakeSystem)
}{
	{"systemd-no-systemctl", systemdOn, func(f *fakeSystem) { f.missing["systemctl"] = true }},
	{"systemd-not-booted", systemdOn, func(f *fakeSystem) { delete(f.files, "/run/systemd/system") }},
	{"systemd-no-user-instance", systemdOn, func(f *fakeSystem) {
		line := "systemctl --user is-system-running"
		f.out[line] = "Failed to connect to bus: $DBUS_SESSION_BUS_ADDRESS and $XDG_RUNTIME_DIR not defined"
		f.fail[line] = fakeErr("exit status 1")
	}},
	{"systemd-user-instance-offline", systemdOn, func(f *fakeSystem) {
		line := "systemctl --user is-system-running"
		f.out[line] = "offline"
		f.fail[line] = fakeErr("exit status 1")
	}},
	{"launchd-no-launchctl", launchdOn, func(f *fakeSystem) { f.missing["launchctl"] = true }},
}

// Ensure that without a service manager install fails, before changing
// anything, with a message that says why and what to run instead.
func TestService_noManager(t *testing.T) {
	for _, tt := range noManagerTests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSystem()
			s := f.service(tt.plat(f))
			tt.setup(f)
			err := s.Install(context.Background(), &strings.Builder{}, Flags{Root: "/home/alice/.claude/tasks", Config: "/home/alice/.config/taskd/config.json"})
			var nm *NoServiceManagerError
			if !errors.As(err, &nm) || !errors.Is(err, ErrNoServiceManager) {
				t.Fatalf("Install: err = %v, want a *NoServiceManagerError", err)
			}
			for _, c := range f.calls {
				if strings.HasPrefix(c, "manager") || strings.HasPrefix(c, "mkdir") {
					t.Errorf("Install without a service manager called %s", c)
				}
			}
			checkGolden(t, "nomanager/"+tt.name+".txt", err.Error()+"\n")
		})
	}
}
