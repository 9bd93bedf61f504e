package remote_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/natstest"
)

// TestRemote_Credentials: a coordinator and a worker log in to a server
// that asks for credentials — over TLS with a CA made for the test and a
// user and password, or with a token — with the options of the
// configuration's "nats" section, and a task runs on the worker.
func TestRemote_Credentials(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		opts natstest.Options
		nats func(srv *natstest.Server) map[string]any
	}{{
		name: "tls and password",
		opts: natstest.Options{TLS: true, User: "taskd", Password: "s3cret"},
		nats: func(srv *natstest.Server) map[string]any {
			return map[string]any{"user": "taskd", "password": "s3cret", "tls": map[string]any{"ca": srv.CAFile()}}
		},
	}, {
		name: "token",
		opts: natstest.Options{Token: "t0ken"},
		nats: func(*natstest.Server) map[string]any { return map[string]any{"token": "t0ken"} },
	}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := natstest.StartWith(t, tt.opts)
			c := newClusterOn(t, srv, []string{"l"}, tt.nats(srv), nil)
			c.worker("w1", "--profiles", "exec")
			c.drop("l", "1", execTask("echo on-the-worker", t.TempDir(), nil))
			c.waitState("l", []string{"1"}, task.Succeeded, 30*time.Second)
			run := filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1")
			if out, _ := os.ReadFile(filepath.Join(run, "stdout.log")); string(out) != "on-the-worker\n" {
				t.Errorf("stdout.log = %q", out)
			}
			if cmd, _ := os.ReadFile(filepath.Join(run, "cmd.json")); !strings.Contains(string(cmd), `"worker": "w1"`) {
				t.Errorf("cmd.json does not name the worker:\n%s", cmd)
			}
		})
	}
}

// TestRemote_RefusedCredentials: against a server that speaks TLS and
// asks for a user and password, `taskd run --nats` and `taskd worker`
// with a wrong password, and a worker that does not trust the server's
// CA, stop at once with an error that says what was refused and what to
// check, instead of waiting for a server that will never let them in.
func TestRemote_RefusedCredentials(t *testing.T) {
	t.Parallel()
	srv := natstest.StartWith(t, natstest.Options{TLS: true, User: "taskd", Password: "s3cret"})
	dir := t.TempDir()
	config := func(name string, nats map[string]any) string {
		path := filepath.Join(dir, name+".json")
		section := `{"url": "` + srv.URL() + `"`
		for k, v := range nats {
			section += `, "` + k + `": ` + v.(string)
		}
		if err := os.WriteFile(path, []byte(`{"nats": `+section+`}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ca := `{"ca": "` + srv.CAFile() + `"}`
	key := filepath.Join(dir, "coordinator.nk")
	pub, _, err := remote.Keygen(key)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]any{"signingKey": `"` + key + `"`, "workerKeys": `["` + pub + `"]`, "coordinatorKeys": `["` + pub + `"]`}
	with := func(m map[string]any) map[string]any {
		for k, v := range keys {
			m[k] = v
		}
		return m
	}
	wrong := config("wrong-password", with(map[string]any{"user": `"taskd"`, "password": `"guess"`, "tls": ca}))
	untrusted := config("no-ca", with(map[string]any{"user": `"taskd"`, "password": `"s3cret"`}))
	root := filepath.Join(dir, "tasks")
	if err := os.MkdirAll(filepath.Join(root, "l"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"coordinator, wrong password", []string{"run", "--root", root, "--config", wrong},
			[]string{"the NATS server refused the connection", "nats: Authorization Violation", "check the credentials"}},
		{"worker, wrong password", []string{"worker", "--config", wrong, "--state", filepath.Join(dir, "state-1")},
			[]string{"the NATS server refused the connection", "nats: Authorization Violation", "check the credentials"}},
		{"worker, CA not given", []string{"worker", "--config", untrusted, "--state", filepath.Join(dir, "state-2")},
			[]string{"the NATS server refused the connection", "certificate signed by unknown authority", "check nats.tls"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(taskdBinary(t), tt.args...)
			cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_STATE_HOME="+dir, "TASKD_ROOT=")
			done := make(chan struct{})
			var out []byte
			var err error
			go func() { out, err = cmd.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running after 30s, waiting for a server that refuses it:\n%s", out)
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit status %d (%v), want 1:\n%s", code, err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the error does not say %q:\n%s", w, out)
				}
			}
			if strings.Contains(string(out), "s3cret") {
				t.Errorf("the output shows the password:\n%s", out)
			}
		})
	}
}
