package install

import (
	"strings"
	"testing"
)

var dryRunTests = []struct {
	name    string
	plat    func(*fakeSystem) platform
	flags   Flags
	replace bool
}{
	{"systemd", systemdOn, Flags{Root: "/home/alice/.claude/tasks"}, false},
	{"systemd-config", systemdOn, Flags{Root: "/home/alice/tasks", Config: "/home/alice/.config/taskd/config.json"}, false},
	{"systemd-replace", systemdOn, Flags{Root: "/home/alice/.claude/tasks"}, true},
	{"launchd", launchdOn, Flags{Root: "/Users/alice/.claude/tasks"}, false},
	{"launchd-replace", launchdOn, Flags{Root: "/Users/alice/.claude/tasks"}, true},
}

// Ensure --dry-run prints the file's path and content and the commands,
// and calls nothing.
func TestService_DryRun(t *testing.T) {
	for _, tt := range dryRunTests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSystem()
			s := f.service(tt.plat(f))
			if tt.replace {
				f.files[s.File()] = true
			}
			var out strings.Builder
			if err := s.DryRun(&out, tt.flags); err != nil {
				t.Fatal(err)
			}
			if len(f.calls) > 0 {
				t.Errorf("DryRun called %q, want nothing", f.calls)
			}
			checkGolden(t, "dryrun/"+tt.name+".txt", out.String())
		})
	}
}

// Ensure --dry-run refuses what install refuses before changing anything.
func TestService_DryRunRefuses(t *testing.T) {
	f := newFakeSystem()
	s := f.service(systemdOn(f))
	s.euid = 0
	if err := s.DryRun(&strings.Builder{}, defaultFlags); err != errRoot {
		t.Errorf("DryRun as root: err = %v, want errRoot", err)
	}
	s.euid = 1000
	if err := s.DryRun(&strings.Builder{}, Flags{Root: "tasks"}); err == nil {
		t.Errorf("DryRun with a relative root: no error")
	}
	s.resolve = resolveExecutable
	s.exe = "/nonexistent/taskd"
	if err := s.DryRun(&strings.Builder{}, defaultFlags); err == nil || !strings.Contains(err.Error(), "find the taskd binary") {
		t.Errorf("DryRun with a missing binary: err = %v", err)
	}
}
