//go:build linux

package install

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeSystemctl answers like systemctl --user for one unit, keeping the
// unit's state in $FAKE_STATE, and logs every call to $FAKE_LOG.
const fakeSystemctl = `#!/bin/sh
echo "systemctl $*" >>"$FAKE_LOG"
case "$*" in
"--user is-system-running") echo running ;;
"start --user "*) echo active >"$FAKE_STATE" ;;
"stop --user "*) echo inactive >"$FAKE_STATE" ;;
"is-active "*)
	s=$(cat "$FAKE_STATE" 2>/dev/null || echo inactive)
	echo "$s"
	[ "$s" = active ] || exit 3 ;;
"list-unit-files "*)
	if [ -f "$HOME/.config/systemd/user/taskd.service" ]; then
		echo "taskd.service enabled enabled"
	else
		echo "0 unit files listed."
	fi ;;
esac
exit 0
`

const fakeLoginctl = `#!/bin/sh
echo "loginctl $*" >>"$FAKE_LOG"
echo Linger=no
`

// Ensure that kardianos/service, driven by Service with stand-ins for
// systemctl and loginctl on PATH, writes exactly the unit that render (and
// so --dry-run) shows, and runs exactly the commands --dry-run lists: for
// a fresh install and for a replacement. Then stop, start, status and
// uninstall go through kardianos as well.
func TestKardianos_systemd(t *testing.T) {
	dir := t.TempDir()
	home, bin := filepath.Join(dir, "home"), filepath.Join(dir, "bin")
	log := filepath.Join(dir, "commands.log")
	mustNot(t, os.MkdirAll(bin, 0o755))
	mustNot(t, os.WriteFile(filepath.Join(bin, "systemctl"), []byte(fakeSystemctl), 0o755))
	mustNot(t, os.WriteFile(filepath.Join(bin, "loginctl"), []byte(fakeLoginctl), 0o755))
	t.Setenv("HOME", home) // kardianos puts the unit in os.UserHomeDir()/.config/systemd/user
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_LOG", log)
	t.Setenv("FAKE_STATE", filepath.Join(dir, "state"))

	h := host{
		home: home, user: "alice", uid: 1000,
		run:      runCommand,
		lookPath: exec.LookPath,
		exists: func(p string) bool {
			return p == "/run/systemd/system" || fileExists(p)
		},
		mkdirAll: func(p string) error { return os.MkdirAll(p, 0o755) },
	}
	u := &systemdUnit{host: h, name: "taskd"}
	s := &Service{
		plat:       u,
		euid:       1000,
		exists:     fileExists,
		newManager: kardianosManager,
		resolve:    func(exe string, _ bool) (string, error) { return exe, nil },
		exe:        "/home/alice/go/bin/taskd",
	}
	ctx := context.Background()
	flags := Flags{Root: filepath.Join(home, ".claude", "tasks"), Config: filepath.Join(home, "taskd config.json")}

	for _, replace := range []bool{false, true} {
		mustNot(t, os.WriteFile(log, nil, 0o644))
		_, c, err := s.spec(flags)
		mustNot(t, err)
		want, err := u.render(c)
		mustNot(t, err)
		var out strings.Builder
		if err := s.Install(ctx, &out, flags); err != nil {
			t.Fatalf("Install (replace=%v): %v\n%s", replace, err, out.String())
		}
		got, err := os.ReadFile(u.file())
		mustNot(t, err)
		if string(got) != want {
			t.Errorf("kardianos wrote (replace=%v):\n%s\nrender gave:\n%s", replace, got, want)
		}
		var wantCmds []string
		for _, line := range u.plan(replace) {
			if !strings.HasPrefix(line, "#") {
				wantCmds = append(wantCmds, line)
			}
		}
		if gotCmds := changes(t, log); !slices.Equal(gotCmds, wantCmds) {
			t.Errorf("commands (replace=%v):\n%s\nwant, as --dry-run lists them:\n%s", replace, strings.Join(gotCmds, "\n"), strings.Join(wantCmds, "\n"))
		}
		if !strings.Contains(out.String(), "Started: the service is running.") ||
			!strings.Contains(out.String(), "To keep it running, run: loginctl enable-linger alice") {
			t.Errorf("Install output lacks the running line or the lingering warning:\n%s", out.String())
		}
	}

	st, err := s.Status(ctx)
	if err != nil || !st.Installed || !st.Running {
		t.Fatalf("Status after Install = %+v, %v; want installed and running", st, err)
	}
	mustNot(t, s.Stop(ctx, &strings.Builder{}))
	if st, err := s.Status(ctx); err != nil || !st.Installed || st.Running {
		t.Errorf("Status after Stop = %+v, %v; want installed, not running", st, err)
	}
	mustNot(t, s.Start(ctx, &strings.Builder{}))
	if st, err := s.Status(ctx); err != nil || !st.Running {
		t.Errorf("Status after Start = %+v, %v; want running", st, err)
	}
	mustNot(t, os.WriteFile(log, nil, 0o644))
	mustNot(t, s.Uninstall(ctx, &strings.Builder{}))
	if fileExists(u.file()) {
		t.Errorf("Uninstall left %s", u.file())
	}
	wantCmds := []string{"systemctl stop --user taskd.service", "systemctl disable --user taskd.service", "systemctl daemon-reload --user"}
	if gotCmds := changes(t, log); !slices.Equal(gotCmds, wantCmds) {
		t.Errorf("Uninstall ran %q, want %q", gotCmds, wantCmds)
	}
	if st, err := s.Status(ctx); err != nil || st.Installed || st.Running {
		t.Errorf("Status after Uninstall = %+v, %v; want not installed", st, err)
	}
}

// changes returns the logged commands that change something: those that
// only ask (is-system-running, is-active, list-unit-files, show-user) are
// left out, as --dry-run leaves them out.
func changes(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	mustNot(t, err)
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		switch f := strings.Fields(line); {
		case len(f) < 2:
		case slices.Contains(f, "is-system-running"), f[1] == "is-active", f[1] == "list-unit-files", f[1] == "show-user":
		default:
			cmds = append(cmds, line)
		}
	}
	return cmds
}
