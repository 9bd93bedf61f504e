package install

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kardianos/service"
)

type operation func(ctx context.Context, s *Service, w io.Writer) error

var defaultFlags = Flags{Root: "/home/alice/.claude/tasks"}

func opInstall(ctx context.Context, s *Service, w io.Writer) error {
	return s.Install(ctx, w, defaultFlags)
}

func opUninstall(ctx context.Context, s *Service, w io.Writer) error { return s.Uninstall(ctx, w) }
func opStart(ctx context.Context, s *Service, w io.Writer) error     { return s.Start(ctx, w) }
func opStop(ctx context.Context, s *Service, w io.Writer) error      { return s.Stop(ctx, w) }

func systemdOn(f *fakeSystem) platform {
	return &systemdUnit{host: f.host(aliceLinux()), name: "taskd"}
}

func launchdOn(f *fakeSystem) platform {
	return &launchdAgent{host: f.host(aliceMac()), label: launchdLabel}
}

const (
	unitFile  = "/home/alice/.config/systemd/user/taskd.service"
	plistFile = "/Users/alice/Library/LaunchAgents/com.github.taskd.taskd.plist"
)

// flowTests run each operation on a fake system; the golden file
// testdata/flow/<name>.txt has the manager calls and commands in order,
// the output and the error.
var flowTests = []struct {
	name  string
	plat  func(*fakeSystem) platform
	setup func(f *fakeSystem)
	op    operation
}{
	{"systemd-install", systemdOn, nil, opInstall},
	{"systemd-install-replace", systemdOn, func(f *fakeSystem) {
		f.files[unitFile], f.running = true, true
	}, opInstall},
	{"systemd-install-linger-off", systemdOn, func(f *fakeSystem) {
		f.out["loginctl show-user alice -p Linger"] = "Linger=no"
	}, opInstall},
	{"systemd-install-linger-not-logged-in", systemdOn, func(f *fakeSystem) {
		f.out["loginctl show-user alice -p Linger"] = "Failed to get user: User ID 1000 is not logged in or lingering"
		f.fail["loginctl show-user alice -p Linger"] = fakeErr("exit status 1")
	}, opInstall},
	{"systemd-install-linger-unknown", systemdOn, func(f *fakeSystem) {
		f.out["loginctl show-user alice -p Linger"] = "Failed to connect to bus: No such file or directory"
		f.fail["loginctl show-user alice -p Linger"] = fakeErr("exit status 1")
	}, opInstall},
	{"systemd-install-start-fails", systemdOn, func(f *fakeSystem) {
		f.fail["Start"] = fakeErr("exit status 1")
	}, opInstall},
	{"systemd-install-root-missing", systemdOn, func(f *fakeSystem) {
		delete(f.files, "/home/alice/.claude/tasks")
	}, opInstall},
	{"systemd-install-as-root", systemdOn, nil, opInstall},
	{"systemd-uninstall", systemdOn, func(f *fakeSystem) {
		f.files[unitFile], f.running = true, true
	}, opUninstall},
	{"systemd-uninstall-not-installed", systemdOn, nil, opUninstall},
	{"systemd-start", systemdOn, func(f *fakeSystem) { f.files[unitFile] = true }, opStart},
	{"systemd-start-running", systemdOn, func(f *fakeSystem) {
		f.files[unitFile], f.running = true, true
	}, opStart},
	{"systemd-start-not-installed", systemdOn, nil, opStart},
	{"systemd-stop", systemdOn, func(f *fakeSystem) {
		f.files[unitFile], f.running = true, true
	}, opStop},
	{"systemd-stop-stopped", systemdOn, func(f *fakeSystem) { f.files[unitFile] = true }, opStop},
	{"systemd-stop-not-installed", systemdOn, nil, opStop},
	{"launchd-install", launchdOn, nil, opInstall},
	{"launchd-install-load-refused", launchdOn, func(f *fakeSystem) {
		f.fail["Start"] = fakeErr(`"launchctl" failed with stderr: Load failed: 5: Input/output error`)
	}, opInstall},
	{"launchd-install-replace", launchdOn, func(f *fakeSystem) {
		f.files[plistFile], f.running = true, true
		f.fail["Stop"] = fakeErr(`"launchctl" failed with stderr: Unload failed: 5: Input/output error`)
	}, opInstall},
	{"launchd-stop-unload-refused", launchdOn, func(f *fakeSystem) {
		f.files[plistFile], f.running = true, true
		f.fail["Stop"] = fakeErr(`"launchctl" failed with stderr: Unload failed: 5: Input/output error`)
	}, opStop},
	{"launchd-start-both-refused", launchdOn, func(f *fakeSystem) {
		f.files[plistFile] = true
		f.fail["Start"] = fakeErr(`"launchctl" failed with stderr: Load failed: 5: Input/output error`)
		f.out["launchctl bootstrap gui/501 "+plistFile] = "Bootstrap failed: 5: Input/output error"
		f.fail["launchctl bootstrap gui/501 "+plistFile] = fakeErr("exit status 5")
	}, opStart},
	{"launchd-uninstall", launchdOn, func(f *fakeSystem) {
		f.files[plistFile], f.running = true, true
	}, opUninstall},
}

func TestService_flows(t *testing.T) {
	for _, tt := range flowTests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSystem()
			s := f.service(tt.plat(f))
			if strings.HasSuffix(tt.name, "-as-root") {
				s.euid = 0
			}
			if tt.setup != nil {
				tt.setup(f)
			}
			var out strings.Builder
			err := tt.op(context.Background(), s, &out)
			checkGolden(t, "flow/"+tt.name+".txt", f.transcript(out.String(), err))
		})
	}
}

// Ensure the errors callers branch on can be told apart with errors.Is.
func TestService_errors(t *testing.T) {
	ctx := context.Background()
	f := newFakeSystem()
	s := f.service(systemdOn(f))
	if err := s.Start(ctx, io.Discard); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Start, not installed: err = %v, want ErrNotInstalled", err)
	}
	if err := s.Stop(ctx, io.Discard); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Stop, not installed: err = %v, want ErrNotInstalled", err)
	}
	f.missing["systemctl"] = true
	for name, op := range map[string]operation{"Install": opInstall, "Uninstall": opUninstall, "Start": opStart, "Stop": opStop} {
		if err := op(ctx, s, io.Discard); !errors.Is(err, ErrNoServiceManager) {
			t.Errorf("%s without systemctl: err = %v, want ErrNoServiceManager", name, err)
		}
	}
	if _, err := s.Status(ctx); !errors.Is(err, ErrNoServiceManager) {
		t.Errorf("Status without systemctl: err = %v, want ErrNoServiceManager", err)
	}
}

var statusTests = []struct {
	name  string
	setup func(f *fakeSystem)
	want  Status
}{
	{"not installed", nil, Status{}},
	{"stopped", func(f *fakeSystem) { f.files[unitFile] = true }, Status{Installed: true}},
	{"running", func(f *fakeSystem) { f.files[unitFile], f.running = true, true }, Status{Installed: true, Running: true}},
	{"failed", func(f *fakeSystem) {
		f.files[unitFile] = true
		f.fail["Status"] = fakeErr("service in failed state")
	}, Status{Installed: true, Detail: "service in failed state"}},
	{"unknown to systemd", func(f *fakeSystem) {
		f.files[unitFile] = true
		f.fail["Status"] = service.ErrNotInstalled
	}, Status{Installed: true, Detail: "the service manager does not know it; 'taskd install' installs it again"}},
}

func TestService_Status(t *testing.T) {
	for _, tt := range statusTests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSystem()
			s := f.service(systemdOn(f))
			if tt.setup != nil {
				tt.setup(f)
			}
			got, err := s.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			tt.want.File = unitFile
			tt.want.Logs = "journalctl --user -u taskd -f"
			if got != tt.want {
				t.Errorf("Status() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
