package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/internal/claudestub"
)

// TestDoctor_Agents: taskd doctor --agents runs each agent profile in use
// for one turn — the real Claude Code CLI against the loopback stub — with
// the environment of the running daemon, a real process started without
// the API key that this shell has: the profile that relies on the daemon's
// environment is "not authenticated" with the fix, one that sets its key
// answers, one pointed at a closed port "cannot reach the API", one whose
// program is missing "executable missing". With no daemon (and no service
// manager here), the checks use this shell's environment and say so.
func TestDoctor_Agents(t *testing.T) {
	isolate(t)
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, func(int, string) claudestub.Turn { return claudestub.Turn{Text: "OK"} })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	dir := t.TempDir()
	root := filepath.Join(dir, "tasks")
	if err := os.MkdirAll(filepath.Join(root, "l"), 0o700); err != nil {
		t.Fatal(err)
	}
	claude := func(env ...string) config.ProfileSpec {
		return config.ProfileSpec{Command: []string{bin, "-p", "--output-format", "stream-json", "--verbose"}, Prompt: "stdin",
			Output: "claude-stream", Flags: "claude", Env: append([]string{"ANTHROPIC_*", "CLAUDE_*"}, env...)}
	}
	missing := claude()
	missing.Command = []string{filepath.Join(dir, "no", "claude"), "-p"}
	cfgFile := filepath.Join(dir, "config.json")
	data, _ := json.Marshal(config.FileConfig{Profiles: map[string]config.ProfileSpec{
		"claude": claude(),
		"keyed":  claude("ANTHROPIC_API_KEY=sk-dummy"),
		// Claude Code gives up after one retry and says why.
		"unreachable": claude("ANTHROPIC_API_KEY=sk-dummy", "ANTHROPIC_BASE_URL="+closed, "CLAUDE_CODE_MAX_RETRIES=1"),
		"missing":     missing,
	}})
	writeTask(t, cfgFile, string(data))

	// This shell has the key; the daemon, as a service would be, has not.
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o700)
	t.Setenv("HOME", home)
	t.Setenv("ANTHROPIC_API_KEY", "sk-dummy")
	t.Setenv("ANTHROPIC_BASE_URL", stub.URL)
	t.Setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
	t.Setenv("TMPDIR", t.TempDir()) // the CLI's claude-<uid> folder, for both environments
	cmd := exec.Command(os.Args[0], "run", "--root", root, "--config", cfgFile)
	cmd.Env = []string{"TASKD_TEST_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg"),
		"XDG_RUNTIME_DIR=" + os.Getenv("XDG_RUNTIME_DIR"), "TMPDIR=" + os.Getenv("TMPDIR"), // the tests' own (TestMain)
		"ANTHROPIC_BASE_URL=" + stub.URL, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	var logs lockedBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	waitUntil(t, "the daemon to take the root", time.Minute, func() bool { held, _, _ := daemon.LockHolder(root); return held })

	doctor := func(cfgFile string) string {
		d := newDoctor(root, cfgFile, nil)
		d.agents, d.agentTimeout = true, 60*time.Second // a real CLI on a loaded machine starts slowly
		d.run(context.Background())
		var out bytes.Buffer
		d.report(&out)
		return out.String()
	}
	out := doctor(cfgFile)
	t.Logf("with the daemon's environment:\n%s", out)
	for _, want := range []string{
		"fail  agent claude: not authenticated, with the environment of the daemon (pid ",
		"Not logged in",
		"fix: give the service ANTHROPIC_API_KEY: put ANTHROPIC_API_KEY=… in ~/.config/taskd/env",
		"ok    agent keyed: answered in ",
		"fail  agent unreachable: cannot reach the API, with the environment of the daemon",
		"ECONNREFUSED",
		"fix: check that this machine reaches the API with the service's environment",
		"fail  agent missing: executable missing: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor --agents lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "agent exec") {
		t.Errorf("a shell-command profile was asked a model's question:\n%s", out)
	}

	stop()
	// Without a daemon, the one profile that needs the shell's key.
	shellCfg := filepath.Join(dir, "shell.json")
	data, _ = json.Marshal(config.FileConfig{Profiles: map[string]config.ProfileSpec{"claude": claude()}})
	writeTask(t, shellCfg, string(data))
	out = doctor(shellCfg)
	for _, want := range []string{
		"warn  agents: checked with this shell's environment: no daemon runs",
		"ok    agent claude: answered in ", // this shell has the key
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor --agents without a daemon lacks %q:\n%s", want, out)
		}
	}
	// The checks are opt-in: they cost a model call each.
	before := len(stub.Bodies())
	if out, _, _ := runCLI(t, "doctor", "--root", root, "--config", cfgFile); strings.Contains(out, "agent keyed:") || strings.Contains(out, "agent claude:") || len(stub.Bodies()) != before {
		t.Errorf("doctor without --agents asked an agent:\n%s", out)
	}
}

// TestServiceEnv: the environment systemd would start the service with is
// the user manager's, then the unit's Environment= (quoted assignments
// too) and its environment files, later values winning.
func TestServiceEnv(t *testing.T) {
	manager := "HOME=/home/alice\nLANG=C.UTF-8\nPATH=/usr/bin:/bin\n"
	unit := "LoadState=loaded\nEnvironment=PATH=/home/alice/.local/bin:/usr/bin \"GREETING=hello world\"\nEnvironmentFiles=/home/alice/.config/taskd/env (ignore_errors=yes)\nEnvironmentFiles=/missing (ignore_errors=yes)\n"
	files := map[string]string{"/home/alice/.config/taskd/env": "# keys\nANTHROPIC_API_KEY=sk-ant-1\nexport HTTPS_PROXY='http://proxy:3128'\n\nLANG=\"en_GB.UTF-8\"\n"}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	got := strings.Join(serviceEnv(manager, unit, read), "\n")
	want := strings.Join([]string{"HOME=/home/alice", "LANG=en_GB.UTF-8", "PATH=/home/alice/.local/bin:/usr/bin", "GREETING=hello world",
		"ANTHROPIC_API_KEY=sk-ant-1", "HTTPS_PROXY=http://proxy:3128"}, "\n")
	if got != want {
		t.Errorf("serviceEnv =\n%s\nwant\n%s", got, want)
	}
}
