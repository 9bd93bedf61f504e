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
// real nats-server process. The ideal ratio with W
// workers is W (W times the slots); "per worker" is the ratio divided by
// W, the share of that ideal that dispatch keeps.
//
//	go test ./bench/remote -run '^$' -bench Overhead -benchtime 1x [-jobs 100] [-reps 5] [-base main] [-cpuprofiles DIR]
//
// BenchmarkOverhead measures what dispatch adds to one attempt: -jobs jobs
// of `true`, one at a time (a daemon of one slot, one worker of one
// slot), through a worker and through the local runner, interleaved -reps
// times in the same run; the overhead per attempt is (remote wall − local
// wall) / jobs, reported as the median and the range of the reps. Each
// measurement starts after a first job has run, so that it does not count
// the worker finding its consumer. Beside the wall time it reports the
// CPU time the daemon, the worker and the NATS server (a nats-server
// process) spent per attempt. With -base, taskd built from another git
// revision is measured the same way in the same run, each of the two
// first in every other rep, for a before and after. With -cpuprofiles
// DIR, the daemons and workers of this tree write CPU profiles (taskd run
// and taskd worker --cpuprofile) into DIR/rep<N>, one per measurement.
package remote_test

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
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/internal/natstest"
	"github.com/taskd/taskd/internal/waitfor"
)

var (
	tasks    = flag.Int("tasks", 200, "jobs per measurement")
	slots    = flag.Int("slots", 4, "concurrent agents of the local runner and of each worker")
	jobs     = flag.Int("jobs", 100, "jobs per measurement of BenchmarkOverhead")
	reps     = flag.Int("reps", 5, "measurements of each kind by BenchmarkOverhead, interleaved")
	oslots   = flag.Int("overhead-slots", 1, "slots of the daemon, BenchmarkOverhead")
	oworkers = flag.Int("overhead-workers", 1, "workers of BenchmarkOverhead, each of overhead-slots/overhead-workers slots")
	base     = flag.String("base", "", "a git revision whose taskd BenchmarkOverhead also measures, in the same run")
	profiles = flag.String("cpuprofiles", "", "a directory where BenchmarkOverhead's daemons and workers of this tree write CPU profiles (taskd --cpuprofile), one per measurement")
)

func BenchmarkDispatch(b *testing.B) {
	bin := build(b, "")
	for range b.N {
		local := rate(*tasks, measure(b, bin, run{slots: *slots, prompt: "sleep 0.2", jobs: *tasks}).wall)
		b.Logf("local runner, %d slots: %.1f jobs/s", *slots, local)
		b.ReportMetric(local, "local-jobs/s")
		for _, w := range []int{1, 2, 4} {
			got := rate(*tasks, measure(b, bin, run{workers: w, slots: *slots, prompt: "sleep 0.2", jobs: *tasks}).wall)
			ratio := got / local
			b.Logf("%d worker(s) x %d slots: %.1f jobs/s, %.2fx the local runner (%.2f per worker)", w, *slots, got, ratio, ratio/float64(w))
			b.ReportMetric(ratio, fmt.Sprintf("ratio-%dw", w))
		}
	}
}

func BenchmarkOverhead(b *testing.B) {
	bins := []struct{ name, path string }{{"this tree", build(b, "")}}
	if *base != "" {
		bins = append(bins, struct{ name, path string }{"base " + *base, build(b, *base)})
	}
	for range b.N {
		overheads := make([][]float64, len(bins))
		ratios := make([][]float64, len(bins))
		cpus := make([][]float64, len(bins))
		for r := range *reps {
			for i, bin := range bins {
				if r%2 == 1 { // each binary first in every other rep
					i = len(bins) - 1 - i
					bin = bins[i]
				}
				one := run{slots: *oslots, prompt: "true", jobs: *jobs, warm: true}
				if *profiles != "" && i == 0 {
					one.profiles = filepath.Join(*profiles, fmt.Sprintf("rep%d", r+1))
				}
				local := measure(b, bin.path, one)
				one.workers, one.slots = *oworkers, *oslots / *oworkers
				remote := measure(b, bin.path, one)
				ms := perJob(remote.wall-local.wall, *jobs)
				cpu := perJob(remote.cpu-local.cpu, *jobs)
				overheads[i] = append(overheads[i], ms)
				cpus[i] = append(cpus[i], cpu)
				ratios[i] = append(ratios[i], float64(remote.wall)/float64(local.wall))
				// A benchmark's log is cut at 10 lines unless -v: every
				// rep with -v, the medians always.
				if testing.Verbose() {
					b.Logf("rep %d, %s: %d jobs of true, %d at a time: local %s (%.1f ms CPU/job), remote %s (%.1f ms CPU/job: daemon %.1f, worker %.1f, server %.1f): %.1f ms per attempt, %.1f ms more CPU",
						r+1, bin.name, *jobs, *oslots, local.wall.Round(time.Millisecond), perJob(local.cpu, *jobs),
						remote.wall.Round(time.Millisecond), perJob(remote.cpu, *jobs), perJob(remote.daemon, *jobs), perJob(remote.workers, *jobs), perJob(remote.server, *jobs), ms, cpu)
				}
			}
		}
		for i, bin := range bins {
			med, lo, hi := spread(overheads[i])
			cmed, clo, chi := spread(cpus[i])
			rmed, _, _ := spread(ratios[i])
			b.Logf("remote overhead per attempt, %s: %.1f ms median (%.1f to %.1f over %d runs; remote/local wall %.2fx), CPU of the daemon, worker and server %.1f ms more than the local daemon's (%.1f to %.1f)",
				bin.name, med, lo, hi, len(overheads[i]), rmed, cmed, clo, chi)
			if i == 0 {
				b.ReportMetric(med, "ms/attempt")
				b.ReportMetric(cmed, "cpu-ms/attempt")
			}
		}
	}
}

// spread returns the median, the least and the greatest of v.
func spread(v []float64) (med, lo, hi float64) {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

// build builds taskd into a temporary directory: from the working tree,
// or from git revision rev, exported (git archive).
func build(b *testing.B, rev string) string {
	dir := b.TempDir()
	bin, src := filepath.Join(dir, "taskd"), "../.."
	if rev != "" {
		src = filepath.Join(dir, "src")
		archive := exec.Command("sh", "-c", `mkdir "$2" && git archive "$1" | tar -x -C "$2"`, "sh", rev, src)
		archive.Dir = "../.."
		if out, err := archive.CombinedOutput(); err != nil {
			b.Fatalf("export %s: %v\n%s", rev, err, out)
		}
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/taskd")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build taskd %s: %v\n%s", rev, err, out)
	}
	return bin
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

// perJob is d per job of n, in milliseconds.
func perJob(d time.Duration, n int) float64 {
	return float64(d) / float64(n) / float64(time.Millisecond)
}

// A cost is what a measurement took: its wall time, and the CPU time
// (user and system) the daemon, the workers and the NATS server spent
// meanwhile, without their children (the agents).
type cost struct {
	wall, cpu               time.Duration
	daemon, workers, server time.Duration // cpu, by process
}

// cpuOf is the CPU time process pid has spent so far, not counting its
// children.
func cpuOf(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's name, which ends with the last ')':
	// utime and stime are the 12th and 13th, in clock ticks.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(user+sys) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's times: 100 on
// every Linux architecture Go runs on.
const clockTicks = 100

// A run is what measure measures: jobs jobs of prompt (through the exec
// profile), through workers workers (none: the local runner) of slots
// slots each, and with warm, after a first job that is not counted.
type run struct {
	workers, slots, jobs int
	prompt               string
	warm                 bool
	// profiles, if set, is a directory the processes write CPU profiles
	// into: local-run, remote-run, remote-worker0, ….
	profiles string
}

// measure runs r's jobs through a daemon on a new root — with workers
// > 0, a coordinator and that many workers on a new NATS server — and
// returns the time from the first file dropped to the last job recorded,
// and the CPU time spent meanwhile.
func measure(b *testing.B, bin string, r run) cost {
	workers := r.workers
	dir := b.TempDir()
	root, list := filepath.Join(dir, "tasks"), filepath.Join(dir, "tasks", "bench")
	if err := os.MkdirAll(list, 0o700); err != nil {
		b.Fatal(err)
	}
	cfg := map[string]any{"concurrency": r.slots, "grace": "1s"}
	var nats *natstest.Process
	var pids []int
	var workerConfigs []string
	if workers > 0 {
		nats = natstest.StartProcess(b, "")
		pids = append(pids, nats.Pid())
		cfg["concurrency"] = workers * r.slots
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
		pids = append(pids, cmd.Process.Pid)
	}
	defer func() {
		for _, p := range procs {
			p.Process.Signal(syscall.SIGTERM)
			p.Wait()
		}
	}()
	profile := func(name string) []string {
		if r.profiles == "" {
			return nil
		}
		if err := os.MkdirAll(r.profiles, 0o700); err != nil {
			b.Fatal(err)
		}
		kind := "local-"
		if workers > 0 {
			kind = "remote-"
		}
		return []string{"--cpuprofile", filepath.Join(r.profiles, kind+name+".pprof")}
	}
	start(append([]string{"run", "--root", root, "--config", config, "--log-level", "warn"}, profile("run")...)...)
	for i := range workers {
		start(append([]string{"worker", "--config", workerConfigs[i], "--profiles", "exec", "--concurrency", strconv.Itoa(r.slots),
			"--state", filepath.Join(dir, "state"+strconv.Itoa(i)), "--name", "w" + strconv.Itoa(i), "--log-level", "warn"}, profile("worker"+strconv.Itoa(i))...)...)
	}
	events := filepath.Join(list, ".taskd", "events.jsonl")
	waitFor(b, "the daemon to start", func() bool { _, err := os.Stat(events); return err == nil })
	task := `{"subject": "job", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "` + r.prompt + `", "cwd": "` + dir + `"}}}`
	drop := func(first, n int) {
		for i := first; i < first+n; i++ {
			tmp := filepath.Join(list, ".drop")
			os.WriteFile(tmp, []byte(task), 0o644)
			if err := os.Rename(tmp, filepath.Join(list, strconv.Itoa(i)+".json")); err != nil {
				b.Fatal(err)
			}
		}
	}
	succeeded := func(n int) func() bool {
		return func() bool {
			data, _ := os.ReadFile(events)
			return strings.Count(string(data), `"TaskSucceeded"`) >= n
		}
	}
	first := 1
	if r.warm {
		drop(first, 1)
		waitFor(b, "the first job to succeed", succeeded(1))
		first++
	}
	cpu := func() []time.Duration {
		var d []time.Duration
		for _, pid := range pids {
			d = append(d, cpuOf(b, pid))
		}
		return d
	}
	t0, cpu0 := time.Now(), cpu()
	drop(first, r.jobs)
	waitFor(b, "every job to succeed", succeeded(first-1+r.jobs))
	c := cost{wall: time.Since(t0)}
	for i, d := range cpu() {
		d -= cpu0[i]
		c.cpu += d
		switch daemon := min(workers, 1); { // pids: the server, if any, the daemon, the workers
		case i < daemon:
			c.server = d
		case i == daemon:
			c.daemon = d
		default:
			c.workers += d
		}
	}
	return c
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
