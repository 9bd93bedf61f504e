//go:build linux

package install

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Ensure, where systemctl --user works, that the real service runs tasks:
// install the real binary as a unit, see it active, drop an exec task, see
// it completed, uninstall, see the unit gone. The unit is named
// taskd-livetest, so the user's own taskd service is never touched. It
// skips with a message where there is no systemd user instance (CI,
// containers), as root, and while this build has no 'taskd run'.
func TestLive_systemdUser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the live service test is not run")
	}
	if os.Geteuid() == 0 {
		t.Skip("running as root, for whom taskd refuses to install a user service; the live service test needs a normal user with a systemd user instance")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h, err := currentHost()
	if err != nil {
		t.Fatal(err)
	}
	u := &systemdUnit{host: h, name: "taskd-livetest"}
	if err := u.noManager(ctx); err != nil {
		t.Skipf("systemctl --user does not work here, so the service is not tried for real:\n%v", err)
	}

	// The binary lives in the test's temporary directory, which install
	// refuses for people ('go run'); allowTemp lifts that for this test.
	dir := t.TempDir()
	bin := filepath.Join(dir, "taskd")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/taskd/taskd/cmd/taskd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := exec.CommandContext(ctx, bin, "help", "run").Run(); err != nil {
		t.Skip("this build of taskd has no 'taskd run' yet, so there is no daemon for the service to run")
	}
	root := filepath.Join(dir, "tasks")
	list := filepath.Join(root, "live")
	mustNot(t, os.MkdirAll(list, 0o755))

	s := &Service{
		plat:       u,
		euid:       os.Geteuid(),
		exists:     fileExists,
		newManager: kardianosManager,
		resolve:    resolveExecutable,
		exe:        bin,
		allowTemp:  true,
	}
	t.Cleanup(func() {
		if fileExists(u.file()) {
			if err := s.Uninstall(context.Background(), io.Discard); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})

	var out strings.Builder
	if err := s.Install(ctx, &out, Flags{Root: root}); err != nil {
		t.Fatalf("Install: %v\n%s", err, out.String())
	}
	t.Logf("install said:\n%s", out.String())
	waitFor(ctx, t, "the unit to be running", func() bool {
		state, _ := u.run(ctx, "systemctl", "--user", "show", "-p", "SubState", "--value", u.unit())
		return state == "running"
	})

	task := `{"subject":"hello","owner":"taskd","metadata":{"taskd":{"agent":"exec","prompt":"echo hello"}}}`
	mustNot(t, os.WriteFile(filepath.Join(list, "1.json"), []byte(task), 0o644))
	waitFor(ctx, t, "task 1 to be completed", func() bool {
		data, err := os.ReadFile(filepath.Join(list, "1.json"))
		var got struct{ Status string }
		return err == nil && json.Unmarshal(data, &got) == nil && got.Status == "completed"
	})

	out.Reset()
	if err := s.Uninstall(ctx, &out); err != nil {
		t.Fatalf("Uninstall: %v\n%s", err, out.String())
	}
	if fileExists(u.file()) {
		t.Errorf("Uninstall left %s", u.file())
	}
	if st, err := s.Status(ctx); err != nil || st.Installed || st.Running {
		t.Errorf("Status after Uninstall = %+v, %v; want neither installed nor running", st, err)
	}
	if state, _ := u.run(ctx, "systemctl", "--user", "show", "-p", "LoadState", "--value", u.unit()); state != "not-found" {
		t.Errorf("systemd still has the unit after Uninstall: LoadState=%s", state)
	}
}

// waitFor polls cond until it holds, failing the test at ctx's deadline.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
