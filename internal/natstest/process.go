package natstest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/internal/syncbuf"
)

// A Process is a real nats-server process, as an operator runs one: its
// own configuration file, its store in a directory of the test, a port
// of its own. Stop, Wipe and Restart it to test outages and lost stores.
type Process struct {
	t     testing.TB
	bin   string
	dir   string // its directory: the configuration file, the store
	conf  string // the configuration file
	port  int
	cmd   *exec.Cmd
	done  chan struct{}
	out   *syncbuf.Buffer
	env   []string
	store string
}

// serverModule is the module of the nats-server that Binary builds.
const serverModule = "github.com/nats-io/nats-server/v2"

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary returns the path of a nats-server binary: $TASKD_NATS_SERVER if
// set, else the one scripts/test-deps built into the module's testdata/bin
// (of the version go.mod requires), else one built the same way with the
// Go toolchain (from the module cache or the module proxy) into a
// directory of this user under the temporary directory, once. Without one it skips t, or fails it when
// TASKD_REQUIRE_TOOLS=1 (CI).
func Binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() { binPath, binErr = findBinary() })
	if binErr != nil {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("nats-server: %v", binErr)
		}
		t.Skipf("nats-server: %v (set TASKD_NATS_SERVER to a nats-server binary)", binErr)
	}
	return binPath
}

func findBinary() (string, error) {
	if p := os.Getenv("TASKD_NATS_SERVER"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("TASKD_NATS_SERVER: %w", err)
		}
		return p, nil
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}|{{.Main}}", serverModule).Output()
	version, _, _ := strings.Cut(strings.TrimSpace(string(out)), "|")
	if err != nil || version == "" {
		return "", fmt.Errorf("go list -m %s: %v", serverModule, err)
	}
	if root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output(); err == nil {
		// What scripts/test-deps built.
		p := filepath.Join(strings.TrimSpace(string(root)), "testdata", "bin", "nats-server-"+version)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("taskd-test-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "nats-server-"+version)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	// Built from within the module (a test's directory is in it): the
	// version its go.mod requires.
	tmp := fmt.Sprintf("%s.%d", path, os.Getpid())
	if out, err := exec.Command("go", "build", "-o", tmp, serverModule).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", serverModule, err, out)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return path, nil
}

// FreePort returns a loopback TCP port nobody listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartProcess starts a nats-server process for t with JetStream, on a
// free loopback port, its store in a directory of the test, and extra
// (more of its configuration: an authorization block, an include) after
// that; env is added to its environment (the variables a configuration
// file names). It stops when t ends.
func StartProcess(t testing.TB, extra string, env ...string) *Process {
	t.Helper()
	dir := t.TempDir()
	port := FreePort(t)
	store := filepath.Join(dir, "store")
	conf := fmt.Sprintf("listen: \"127.0.0.1:%d\"\nserver_name: taskd-test\njetstream {\n  store_dir: %q\n}\n%s\n", port, store, extra)
	path := filepath.Join(dir, "nats-server.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return StartProcessFile(t, path, port, store, env...)
}

// StartProcessFile starts a nats-server process for t with the
// configuration file conf, which makes it listen on port of 127.0.0.1 and
// keep its store in store; env is added to its environment. It stops when
// t ends.
func StartProcessFile(t testing.TB, conf string, port int, store string, env ...string) *Process {
	t.Helper()
	p := &Process{t: t, bin: Binary(t), dir: filepath.Dir(conf), conf: conf, port: port, store: store, out: &syncbuf.Buffer{},
		env: append(os.Environ(), env...)}
	p.start()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("--- nats-server (its warnings and errors) ---\n%s", p.notable())
		}
	})
	return p
}

func (p *Process) start() {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p.cmd = exec.Command(p.bin, "-c", p.conf)
		p.cmd.Env = p.env
		p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := p.cmd.Start(); err != nil {
			p.t.Fatalf("start nats-server: %v", err)
		}
		p.done = make(chan struct{})
		go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(p.cmd, p.done)
		err := p.waitReady(deadline)
		if err == nil {
			return
		}
		p.kill()
		if time.Now().After(deadline) || !strings.Contains(p.out.String(), "address already in use") {
			p.t.Fatalf("nats-server not ready: %v\n%s", err, p.out.String())
		}
		time.Sleep(200 * time.Millisecond) // the port of a server just stopped may take a moment to be free
	}
}

// waitReady waits until the server answers on its port with its INFO
// line and says it is ready.
func (p *Process) waitReady(deadline time.Time) error {
	for {
		select {
		case <-p.done:
			return fmt.Errorf("it exited")
		default:
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p.port), time.Second)
		if err == nil {
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if strings.HasPrefix(line, "INFO") && strings.Contains(p.out.String(), "Server is ready") {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer on port %d", p.port)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// notable is the warnings and errors the server logged.
func (p *Process) notable() string {
	var b strings.Builder
	for _, l := range strings.Split(p.out.String(), "\n") {
		if strings.Contains(l, "[WRN]") || strings.Contains(l, "[ERR]") || strings.Contains(l, "[FTL]") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// URL is the server's address.
func (p *Process) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", p.port) }

// Port is the server's port.
func (p *Process) Port() int { return p.port }

// Output is what the server logged.
func (p *Process) Output() string { return p.out.String() }

// Stop stops the server (SIGTERM; SIGKILL if it takes more than 10s), and
// waits for it (idempotent).
func (p *Process) Stop() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.kill()
	}
	p.cmd = nil
}

func (p *Process) kill() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Restart starts the stopped server again, on the same port and store.
func (p *Process) Restart() {
	p.t.Helper()
	p.start()
}

// Wipe removes the stopped server's store: it comes back empty.
func (p *Process) Wipe() {
	p.t.Helper()
	if p.cmd != nil {
		p.t.Fatal("Wipe: the server runs")
	}
	if err := os.RemoveAll(p.store); err != nil {
		p.t.Fatal(err)
	}
}

// Pid is the process id of the running server.
func (p *Process) Pid() int { return p.cmd.Process.Pid }
