// Command throughput measures taskd end to end, as a user sees it: a
// producer renames task files into a list, a real `taskd run` process runs
// them, and the figures come from the files taskd writes.
//
//	go run ./bench/throughput [-n 1000] [-workers 1,2] [-latency 50]
//
// It reports, for each worker count, tasks per second from the first file
// dropped to the last task completed (every task runs `true` through the
// exec profile, with every state change fsynced), and the median and p90
// latency from a file being renamed into an idle list to its agent process
// starting (result.json's startedAt). A baseline measured in the same run —
// Go starting `true` directly with the same parallelism — puts the figures
// in proportion, since absolute times on a shared machine vary.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/taskd/taskd/bench/taskdrun"
)

func main() {
	n := flag.Int("n", 1000, "tasks per throughput run")
	workersFlag := flag.String("workers", "1,2", "worker counts to measure")
	latencyRuns := flag.Int("latency", 50, "latency samples")
	taskd := flag.String("taskd", "", "taskd binary (default: build ./cmd/taskd)")
	flag.Parse()
	if err := run(*n, *workersFlag, *latencyRuns, *taskd); err != nil {
		fmt.Fprintln(os.Stderr, "throughput:", err)
		os.Exit(1)
	}
}

func run(n int, workersFlag string, latencyRuns int, bin string) error {
	work, err := os.MkdirTemp("", "taskd-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if bin == "" {
		bin = filepath.Join(work, "taskd")
		build := exec.Command("go", "build", "-o", bin, "./cmd/taskd")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build taskd: %w", err)
		}
	}
	fmt.Printf("%-34s %12s %12s\n", "measurement", "result", "vs baseline")
	for _, w := range strings.Split(workersFlag, ",") {
		workers, err := strconv.Atoi(w)
		if err != nil {
			return err
		}
		base := baseline(n, workers)
		rate, err := throughput(work, bin, n, workers)
		if err != nil {
			return err
		}
		fmt.Printf("%-34s %9.0f /s %12s\n", fmt.Sprintf("baseline: exec true, P=%d", workers), base, "1.00")
		fmt.Printf("%-34s %9.0f /s %11.2fx\n", fmt.Sprintf("taskd: %d tasks end to end, P=%d", n, workers), rate, rate/base)
	}
	if latencyRuns > 0 {
		p50, p90, err := latency(work, bin, latencyRuns)
		if err != nil {
			return err
		}
		fmt.Printf("%-34s %9.2f ms\n", "taskd: pickup latency p50", p50)
		fmt.Printf("%-34s %9.2f ms\n", "taskd: pickup latency p90", p90)
	}
	return nil
}

// baseline runs `true` n times from Go with the given parallelism: the floor
// any task runner pays for starting a process.
func baseline(n, workers int) float64 {
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				exec.Command("sh", "-c", "true").Run()
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// daemon starts `taskd run` on a fresh root with the given concurrency.
func daemon(work, bin string, workers int) (root string, stop func(), err error) {
	root, err = os.MkdirTemp(work, "root-")
	if err != nil {
		return "", nil, err
	}
	os.Chmod(root, 0o700)
	cfg := filepath.Join(root, ".config.json")
	os.WriteFile(cfg, fmt.Appendf(nil, `{"concurrency": %d}`, workers), 0o600)
	// The daemon is up once its list's event log is made.
	events := filepath.Join(root, "bench", ".taskd", "events.jsonl")
	d, err := taskdrun.Start(taskdrun.Options{Bin: bin, Root: root, Config: cfg, LogLevel: "warn", Echo: os.Stderr,
		Ready: func(*taskdrun.Daemon) bool { _, err := os.Stat(events); return err == nil }, Timeout: 10 * time.Second})
	if err != nil {
		return "", nil, err
	}
	return root, d.Stop, nil
}

func taskJSON(i int) []byte {
	return fmt.Appendf(nil, `{"id": "%d", "subject": "bench %d", "description": "", "activeForm": "bench %d", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`, i, i, i)
}

// drop writes task i the way a producer should.
func drop(list string, i int) error { return taskdrun.Drop(list, strconv.Itoa(i), taskJSON(i)) }

func throughput(work, bin string, n, workers int) (float64, error) {
	root, stop, err := daemon(work, bin, workers)
	if err != nil {
		return 0, err
	}
	defer stop()
	list := filepath.Join(root, "bench")
	start := time.Now()
	for i := 1; i <= n; i++ {
		if err := drop(list, i); err != nil {
			return 0, err
		}
	}
	err = waitFor(5*time.Minute, func() bool { return taskdrun.Succeeded(list) >= n })
	return float64(n) / time.Since(start).Seconds(), err
}

func latency(work, bin string, runs int) (p50, p90 float64, err error) {
	root, stop, err := daemon(work, bin, 2)
	if err != nil {
		return 0, 0, err
	}
	defer stop()
	list := filepath.Join(root, "bench")
	var samples []float64
	for i := 1; i <= runs; i++ {
		before := time.Now()
		if err := drop(list, i); err != nil {
			return 0, 0, err
		}
		result := filepath.Join(list, ".taskd", "runs", strconv.Itoa(i), "1", "result.json")
		var r struct {
			StartedAt time.Time `json:"startedAt"`
		}
		if err := waitFor(10*time.Second, func() bool {
			data, err := os.ReadFile(result)
			return err == nil && json.Unmarshal(data, &r) == nil
		}); err != nil {
			return 0, 0, err
		}
		samples = append(samples, float64(r.StartedAt.Sub(before).Microseconds())/1000)
		// Let the daemon go idle again before the next sample.
		waitFor(10*time.Second, func() bool { return taskdrun.Succeeded(list) >= i })
	}
	slices.Sort(samples)
	return samples[len(samples)/2], samples[len(samples)*9/10], nil
}

func waitFor(timeout time.Duration, cond func() bool) error {
	return taskdrun.WaitFor(timeout, time.Millisecond, cond)
}
