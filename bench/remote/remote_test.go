// Package remote_test measures the throughput of agent runs dispatched to
// taskd workers through NATS JetStream against the local runner, in the
// same run, as ratios.
//
//	go test ./bench/remote -run '^$' -bench . -benchtime 1x [-tasks 200] [-slots 4]
//
// Every job is `sleep 0.2` through the exec profile, so the figure is the
// cost of dispatch (claim, publish, pull, report, record) and not of
// starting processes, which a machine does as fast either way. The local
// runner is `taskd run` with -slots concurrent agents; each worker is a
// `taskd worker --concurrency slots` process, all on this machine, with a
// real NATS server embedded in the benchmark. The ideal ratio with W
// workers is W (W times the slots); "per worker" is the ratio divided by
// W, the share of that ideal that dispatch keeps.
package remote_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/internal/natstest"
	"github.com/taskd/taskd/internal/waitfor"
)

var (
	tasks = flag.Int("tasks", 200, "jobs per measurement")
	slots = flag.Int("slots", 4, "concurrent agents of the local runner and of each worker")
)

func BenchmarkDispatch(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "taskd")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/taskd").CombinedOutput(); err != nil {
		b.Fatalf("build taskd: %v\n%s", err, out)
	}
	for range b.N {
		local := measure(b, bin, 0)
		b.Logf("local runner, %d slots: %.1f jobs/s", *slots, local)
		b.ReportMetric(local, "local-jobs/s")
		for _, w := range []int{1, 2, 4} {
			got := measure(b, bin, w)
			ratio := got / local
			b.Logf("%d worker(s) x %d slots: %.1f jobs/s, %.2fx the local runner (%.2f per worker)", w, *slots, got, ratio, ratio/float64(w))
			b.ReportMetric(ratio, fmt.Sprintf("ratio-%dw", w))
		}
	}
}

// measure runs *tasks jobs through a daemon on a new root — with workers
// > 0, a coordinator and that many workers on a new NATS server — and
// returns jobs per second from the first file dropped to the last job
// recorded.
func measure(b *testing.B, bin string, workers int) float64 {
	dir := b.TempDir()
	root, list := filepath.Join(dir, "tasks"), filepath.Join(dir, "tasks", "bench")
	if err := os.MkdirAll(list, 0o700); err != nil {
		b.Fatal(err)
	}
	cfg := map[string]any{"concurrency": *slots, "grace": "1s"}
	var nats *natstest.Server
	var workerConfigs []string
	if workers > 0 {
		nats = natstest.Start(b)
		cfg["concurrency"] = workers * *slots
		coordKey := filepath.Join(dir, "coordinator.nk")
		coordPub, _, err := remote.Keygen(coordKey)
		if err != nil {
			b.Fatal(err)
		}
		var pubs []string
		for i := range workers {
			key := filepath.Join(dir, "worker"+strconv.Itoa(i)+".nk")
			pub, _, err := remote.Keygen(key)
			if err != nil {
				b.Fatal(err)
			}
			pubs = append(pubs, pub)
			workerConfigs = append(workerConfigs, writeJSON(b, filepath.Join(dir, "worker"+strconv.Itoa(i)+".json"),
				map[string]any{"nats": map[string]any{"url": nats.URL(), "signingKey": key, "coordinatorKeys": []string{coordPub}}}))
		}
		cfg["nats"] = map[string]any{"url": nats.URL(), "signingKey": coordKey, "workerKeys": pubs}
	}
	config := writeJSON(b, filepath.Join(dir, "config.json"), cfg)
	var procs []*exec.Cmd
	start := func(args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "TASKD_ROOT=")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	defer func() {
		for _, p := range procs {
			p.Process.Signal(syscall.SIGTERM)
			p.Wait()
		}
	}()
	start("run", "--root", root, "--config", config, "--log-level", "warn")
	for i := range workers {
		start("worker", "--config", workerConfigs[i], "--profiles", "exec", "--concurrency", strconv.Itoa(*slots),
			"--state", filepath.Join(dir, "state"+strconv.Itoa(i)), "--name", "w"+strconv.Itoa(i), "--log-level", "warn")
	}
	events := filepath.Join(list, ".taskd", "events.jsonl")
	waitFor(b, "the daemon to start", func() bool { _, err := os.Stat(events); return err == nil })
	task := `{"subject": "job", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "sleep 0.2", "cwd": "` + dir + `"}}}`
	t0 := time.Now()
	for i := 1; i <= *tasks; i++ {
		tmp := filepath.Join(list, ".drop")
		os.WriteFile(tmp, []byte(task), 0o644)
		if err := os.Rename(tmp, filepath.Join(list, strconv.Itoa(i)+".json")); err != nil {
			b.Fatal(err)
		}
	}
	waitFor(b, "every job to succeed", func() bool {
		data, _ := os.ReadFile(events)
		return strings.Count(string(data), `"TaskSucceeded"`) >= *tasks
	})
	return float64(*tasks) / time.Since(t0).Seconds()
}

// writeJSON writes v as JSON to path, and returns path.
func writeJSON(b *testing.B, path string, v any) string {
	data, _ := json.Marshal(v)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

func waitFor(b *testing.B, what string, cond func() bool) {
	b.Helper()
	waitfor.Cond(b, what, 5*time.Minute, cond)
}
