// Command peers measures taskd side by side with nq and task-spooler (tsp)
// on the same machine, in one run, and prints a table with the ratios
// taskd/peer. bench/peers.sh installs the peers and runs it.
//
//	go run ./bench/peers [-n 1000] [-runs 3] [-latency 50] [-idle 10s] [-scan 10000,100000] [-rescan 100000] [-queued 10000] [-json FILE]
//
// Measurements (the peers' as in their own documentation of use):
//
//   - throughput: n jobs of `true`, from the first enqueue to the last
//     completion, with 1 and 2 workers (nq: one queue directory per worker;
//     tsp: -S slots; taskd: concurrency). nq and tsp enqueue with their
//     command-line client, one process per job; taskd's producer writes the
//     task file and renames it into the list, as Claude Code does. The median
//     of -runs runs is shown.
//   - latency: from just before the enqueue to the job's start, median
//     and p90 of -latency samples, each enqueued into an idle queue, in two
//     ways (latency.go): the job's shell creating a file, seen through
//     inotify, and the job's shell starting `date` to write the time. The
//     job is `sh -c …` for every tool (taskd's exec profile runs its prompt
//     with sh -c). The floor is the same command started directly from Go.
//   - idle: CPU time, context switches (wake-ups) of all threads and RSS of
//     the long-running process (tsp's server, taskd's daemon) over -idle,
//     after a second to settle; nq has no process while idle.
//   - scan: taskd's startup (process start to "taskd started", after the
//     full scan) and RSS with N finished task files in a list.
//   - rescan: taskd's idle RSS with -rescan finished task files, and its
//     peak RSS during a safety rescan of them, against the bound of 40 MiB
//     above idle (rescan.go).
//   - disk: what each finished task of a throughput run left in its list,
//     in inodes and allocated bytes.
//   - queued: memory per queued job: taskd's RSS with -queued pending tasks
//     blocked by an unfinished task, less its RSS with none, per task; for
//     nq and tsp the PSS of all their processes with 900 jobs queued behind
//     a running one, less that with none, per job (tsp refuses more than
//     about 1000 unfinished jobs).
//
// -json FILE also writes the rows as JSON, for bench/figures.
//
// It works in taskd-bench under the user's cache directory (-dir to
// change), and before every throughput run measures what creating a file
// costs there (disk.go): on some file systems that cost depends on what
// was deleted minutes before, and moves taskd's figures most.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/taskd/taskd/bench/taskdrun"
)

var (
	nFlag      = flag.Int("n", 1000, "jobs per throughput run")
	runsFlag   = flag.Int("runs", 3, "throughput runs per tool and worker count (the median is shown)")
	latFlag    = flag.Int("latency", 50, "latency samples per tool")
	idleFlag   = flag.Duration("idle", 10*time.Second, "idle measurement period")
	scanFlag   = flag.String("scan", "10000,100000", "task file counts for taskd's startup scan")
	queuedFlag = flag.Int("queued", 10000, "queued tasks for taskd's memory per task")
	peerQueued = flag.Int("peer-queued", 900, "queued jobs for nq's and tsp's memory per job")
	taskdFlag  = flag.String("taskd", "", "taskd binary (default: build ./cmd/taskd)")
	onlyFlag   = flag.String("only", "", "comma-separated sections to run: throughput,latency,idle,scan,rescan,queued")
	settleFlag = flag.Duration("settle", 6*time.Minute, "in all, wait up to this long before throughput runs for creating an inode to cost under 50 µs again (0: do not wait)")
	keepFlag   = flag.Bool("keep", false, "keep the work directory (removing it slows file creation nearby for minutes on some file systems, and so a run that follows)")
	dirFlag    = flag.String("dir", "", "directory to work in (default: taskd-bench in the user's cache directory, on the file system of the home directory, where task lists live)")
	rescanFlag = flag.Int("rescan", 100000, "finished task files for the memory of a safety rescan (rescan.go)")
	jsonFlag   = flag.String("json", "", "also write the rows as JSON to this file (for bench/figures)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

// A row of the result table: a measurement, a value per tool, and how to
// read the ratio.
type row struct {
	name   string
	unit   string
	floor  float64 // 0 if none
	values map[string]float64
	higher bool // higher is better
	note   string
}

var tools = []string{"taskd", "nq", "tsp"}

func run() error {
	work, err := os.MkdirTemp(workParent(*dirFlag), "taskd-peers-")
	if err != nil {
		return err
	}
	if *keepFlag {
		defer fmt.Printf("Kept the work directory %s: remove it later.\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := *taskdFlag
	if bin == "" {
		bin = filepath.Join(work, "taskd")
		build := exec.Command("go", "build", "-o", bin, "./cmd/taskd")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build taskd: %w", err)
		}
	}
	for _, p := range []string{"nq", "tsp"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%s is not installed: run bench/peers.sh, which installs it", p)
		}
	}
	want := func(s string) bool { return *onlyFlag == "" || slices.Contains(strings.Split(*onlyFlag, ","), s) }
	env := &bench{work: work, taskd: bin}
	var rows []row
	start := time.Now()
	if want("throughput") {
		for _, p := range []int{1, 2} {
			r, err := env.throughput(p)
			if err != nil {
				return err
			}
			rows = append(rows, r)
		}
	}
	if want("latency") {
		r, err := env.latency()
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if want("idle") {
		r, err := env.idle()
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if want("scan") {
		for _, s := range strings.Split(*scanFlag, ",") {
			n, err := strconv.Atoi(s)
			if err != nil {
				return err
			}
			r, err := env.scan(n)
			if err != nil {
				return err
			}
			rows = append(rows, r...)
		}
	}
	if want("rescan") {
		r, err := env.rescan(*rescanFlag)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if want("queued") {
		r, err := env.queued()
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	if len(env.disk) > 0 {
		rows = append(rows, diskRows(env.disk)...)
	}
	printTable(rows)
	if *jsonFlag != "" {
		if err := writeJSON(*jsonFlag, rows); err != nil {
			return err
		}
	}
	fs := fsKind(work)
	if fs == "" {
		fs = "unknown"
	}
	fmt.Printf("\n%d CPUs, load average %s, %s in all; file system: %s\n", cpus(), loadavg(), time.Since(start).Round(time.Second), fs)
	if env.waited > 0 {
		fmt.Printf("Waited %s in all for the disk to settle before throughput runs.\n", env.waited)
	}
	if len(env.costs) > 0 && slices.Max(env.costs) > 3*slices.Min(env.costs) {
		fmt.Printf("Creating an inode cost from %s to %s µs before the throughput runs: the disk was not settled, and the runs taken at the higher costs measure it more than the tools.\n",
			format(slices.Min(env.costs)), format(slices.Max(env.costs)))
	}
	if fs == "ext4 without a journal" {
		fmt.Println("On ext4 without a journal, creating files is slower for minutes after directories were removed nearby: see docs/proof.md (Benchmarks).")
	}
	return nil
}

type bench struct {
	work   string
	taskd  string
	seq    int
	costs  []float64     // µs per inode created, before each throughput run
	waited time.Duration // for the disk to settle (settledCost)
	disk   []perTask     // what each taskd throughput run left on disk
}

// dir returns a new directory (mode 0700) under the work directory.
func (b *bench) dir(prefix string) string {
	b.seq++
	d := filepath.Join(b.work, fmt.Sprintf("%s-%d", prefix, b.seq))
	os.MkdirAll(d, 0o700)
	return d
}

// --- taskd ---

// daemon is a running `taskd run`.
type daemon struct{ *taskdrun.Daemon }

// startTaskd starts taskd on root (whose list "bench" may hold tasks) with
// the given concurrency, and waits until it has scanned.
func (b *bench) startTaskd(root string, workers int) (*daemon, error) {
	return b.startTaskdWith(root, workers, "1h")
}

// startTaskdWith is startTaskd with the given safety rescan period.
func (b *bench) startTaskdWith(root string, workers int, rescan string) (*daemon, error) {
	cfg := filepath.Join(b.work, fmt.Sprintf("config-%d-%s.json", workers, rescan))
	os.WriteFile(cfg, fmt.Appendf(nil, `{"concurrency": %d, "rescan": %q}`, workers, rescan), 0o600)
	d, err := taskdrun.Start(taskdrun.Options{Bin: b.taskd, Root: root, Config: cfg, LogLevel: "info",
		Env: []string{"XDG_CONFIG_HOME=" + b.work}, Timeout: 10 * time.Minute})
	if err != nil {
		return nil, err
	}
	return &daemon{d}, nil
}

func taskJSON(id, script string, extra string) []byte {
	return fmt.Appendf(nil, `{"id": %q, "subject": "bench %s", "description": "", "activeForm": "bench %s", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [%s], "metadata": {"taskd": {"agent": "exec", "prompt": %q}}}`,
		id, id, id, extra, script)
}

// eventCounter counts TaskSucceeded events, reading only what was appended
// since it last looked, so that waiting costs the daemon little CPU.
type eventCounter struct {
	path string
	off  int64
	n    int
	tail []byte
}

func (c *eventCounter) count() int {
	f, err := os.Open(c.path)
	if err != nil {
		return c.n
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		k, err := f.ReadAt(buf, c.off)
		if k > 0 {
			c.off += int64(k)
			data := append(c.tail, buf[:k]...)
			last := bytes.LastIndexByte(data, '\n')
			if last >= 0 {
				c.n += bytes.Count(data[:last], []byte(`"type":"TaskSucceeded"`))
				c.tail = append(c.tail[:0], data[last+1:]...)
			} else {
				c.tail = data
			}
		}
		if err != nil || k == 0 {
			return c.n
		}
	}
}

// --- throughput ---

func (b *bench) throughput(workers int) (row, error) {
	n := *nFlag
	r := row{name: fmt.Sprintf("throughput, %d jobs of true, P=%d", n, workers), unit: "jobs/s", higher: true, values: map[string]float64{}}
	var floors, costs []float64
	samples := map[string][]float64{}
	for range *runsFlag {
		floors = append(floors, floor(n, workers, "true"))
		for _, tool := range tools {
			cost, err := b.settledCost()
			if err != nil {
				return r, fmt.Errorf("file creation cost: %w", err)
			}
			costs = append(costs, float64(cost)/float64(time.Microsecond))
			b.costs = append(b.costs, costs[len(costs)-1])
			var rate float64
			switch tool {
			case "taskd":
				rate, err = b.taskdThroughput(n, workers)
			case "nq":
				rate, err = b.nqThroughput(n, workers)
			case "tsp":
				rate, err = b.tspThroughput(n, workers)
			}
			if err != nil {
				return r, fmt.Errorf("%s throughput: %w", tool, err)
			}
			samples[tool] = append(samples[tool], rate)
		}
	}
	r.floor = median(floors)
	for tool, s := range samples {
		r.values[tool] = median(s)
		fmt.Fprintf(os.Stderr, "throughput P=%d %s: %v\n", workers, tool, rounded(s))
	}
	fmt.Fprintf(os.Stderr, "throughput P=%d floor: %v\n", workers, rounded(floors))
	fmt.Fprintf(os.Stderr, "throughput P=%d µs per inode created, before each run: %v\n", workers, rounded(costs))
	r.note = fmt.Sprintf("floor: Go starting `true` directly; an inode created in %s µs (median before the runs)", format(median(costs)))
	return r, nil
}

// floor starts cmd n times from Go with the given parallelism.
func floor(n, workers int, cmd string) float64 {
	start := time.Now()
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range next {
				exec.Command(cmd).Run()
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

func (b *bench) taskdThroughput(n, workers int) (float64, error) {
	d, err := b.startTaskd(b.dir("root"), workers)
	if err != nil {
		return 0, err
	}
	defer d.Stop()
	inodes0, bytes0, err := diskUse(d.List)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		if err := taskdrun.Drop(d.List, id, taskJSON(id, "true", "")); err != nil {
			return 0, err
		}
	}
	c := &eventCounter{path: filepath.Join(d.List, ".taskd", "events.jsonl")}
	if err := taskdrun.WaitFor(10*time.Minute, 2*time.Millisecond, func() bool { return c.count() >= n }); err != nil {
		return 0, err
	}
	rate := float64(n) / time.Since(start).Seconds()
	inodes, bytes, err := diskUse(d.List)
	if err != nil {
		return 0, err
	}
	b.disk = append(b.disk, perTask{inodes: float64(inodes-inodes0) / float64(n), bytes: float64(bytes-bytes0) / float64(n)})
	return rate, nil
}

func (b *bench) nqThroughput(n, workers int) (float64, error) {
	var dirs []string
	for range workers {
		dirs = append(dirs, b.dir("nq"))
	}
	start := time.Now()
	for i := range n {
		cmd := exec.Command("nq", "-q", "true")
		cmd.Env = append(os.Environ(), "NQDIR="+dirs[i%workers])
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("nq: %w", err)
		}
	}
	for _, d := range dirs {
		cmd := exec.Command("nq", "-w")
		cmd.Env = append(os.Environ(), "NQDIR="+d)
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("nq -w: %w", err)
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// tspEnv returns the environment of a private tsp server.
func (b *bench) tspEnv() []string {
	d := b.dir("tsp")
	return append(os.Environ(), "TS_SOCKET="+filepath.Join(d, "socket"), "TMPDIR="+d, "TS_MAXFINISHED=100000")
}

func tsp(env []string, args ...string) (string, error) {
	cmd := exec.Command("tsp", args...)
	cmd.Env = env
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

func (b *bench) tspThroughput(n, workers int) (float64, error) {
	env := b.tspEnv()
	if _, err := tsp(env, "-S", strconv.Itoa(workers)); err != nil {
		return 0, fmt.Errorf("tsp -S: %w", err)
	}
	defer tsp(env, "-K")
	start := time.Now()
	var last string
	for range n {
		var err error
		if last, err = tsp(env, "true"); err != nil {
			return 0, fmt.Errorf("tsp: %w", err)
		}
	}
	tsp(env, "-w", last) // blocks without polling
	err := taskdrun.WaitFor(10*time.Minute, 2*time.Millisecond, func() bool {
		out, err := tsp(env, "-l")
		return err == nil && !strings.Contains(out, "running") && !strings.Contains(out, "queued")
	})
	return float64(n) / time.Since(start).Seconds(), err
}

// --- idle ---

// procStats are a process's counters, summed over its threads.
type procStats struct {
	cpu    time.Duration // user + system
	wakeup int64         // voluntary + involuntary context switches
	rss    int64         // bytes
}

func readProc(pid int) (procStats, error) {
	var s procStats
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	s.cpu = time.Duration(ut+st) * time.Second / 100 // USER_HZ
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		s.wakeup += statusField(data, "voluntary_ctxt_switches") + statusField(data, "nonvoluntary_ctxt_switches")
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	s.rss = statusField(status, "VmRSS") * 1024
	return s, nil
}

func statusField(data []byte, name string) int64 {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

// idleOf measures pid over the idle period, after a second to settle.
func idleOf(pid int) (procStats, error) {
	settle := time.NewTimer(time.Second)
	<-settle.C
	a, err := readProc(pid)
	if err != nil {
		return a, err
	}
	period := time.NewTimer(*idleFlag)
	<-period.C
	b, err := readProc(pid)
	return procStats{cpu: b.cpu - a.cpu, wakeup: b.wakeup - a.wakeup, rss: b.rss}, err
}

func (b *bench) idle() ([]row, error) {
	secs := idleFlag.Seconds()
	wake := row{name: fmt.Sprintf("idle wake-ups in %s", *idleFlag), unit: "", values: map[string]float64{}, note: "nq: no process while idle"}
	cpu := row{name: fmt.Sprintf("idle CPU time in %s", *idleFlag), unit: "ms", values: map[string]float64{}}
	rss := row{name: "idle RSS", unit: "MiB", values: map[string]float64{}}
	d, err := b.startTaskd(b.dir("root"), 2)
	if err != nil {
		return nil, err
	}
	s, err := idleOf(d.Pid())
	d.Stop()
	if err != nil {
		return nil, err
	}
	wake.values["taskd"], cpu.values["taskd"], rss.values["taskd"] = float64(s.wakeup), ms(s.cpu), mib(s.rss)
	env := b.tspEnv()
	if _, err := tsp(env, "-S", "2"); err != nil {
		return nil, err
	}
	pid, err := tspServer(env)
	if err != nil {
		tsp(env, "-K")
		return nil, err
	}
	s, err = idleOf(pid)
	tsp(env, "-K")
	if err != nil {
		return nil, err
	}
	wake.values["tsp"], cpu.values["tsp"], rss.values["tsp"] = float64(s.wakeup), ms(s.cpu), mib(s.rss)
	wake.values["nq"], cpu.values["nq"], rss.values["nq"] = 0, 0, 0
	_ = secs
	return []row{wake, cpu, rss}, nil
}

// tspServer finds the pid of the tsp server of env's socket.
func tspServer(env []string) (int, error) {
	var sock string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TS_SOCKET="); ok {
			sock = v
		}
	}
	for _, pid := range processesWithEnv("TS_SOCKET=" + sock) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		// The server is the tsp process without a job child: the one whose
		// parent is not a tsp client. Simplest: the oldest tsp process.
		if strings.HasPrefix(filepath.Base(string(bytes.Split(cmdline, []byte{0})[0])), "tsp") {
			return pid, nil
		}
	}
	return 0, errors.New("tsp server not found")
}

// processesWithEnv returns the pids of this user's processes whose
// environment holds kv, oldest first.
func processesWithEnv(kv string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		if slices.ContainsFunc(bytes.Split(env, []byte{0}), func(v []byte) bool { return string(v) == kv }) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// --- scan and memory ---

func (b *bench) scan(n int) ([]row, error) {
	root := b.dir("root")
	list := filepath.Join(root, "bench")
	os.MkdirAll(list, 0o700)
	if _, err := writeFinished(list, n); err != nil {
		return nil, err
	}
	// Drop the page cache's advantage of having just written them? Not
	// possible without privileges everywhere; the files are warm, as they
	// are for a daemon restarted on a live machine.
	d, err := b.startTaskd(root, 2)
	if err != nil {
		return nil, err
	}
	s, err := readProc(d.Pid())
	d.Stop()
	if err != nil {
		return nil, err
	}
	os.RemoveAll(root)
	return []row{
		{name: fmt.Sprintf("taskd startup scan, %d finished tasks", n), unit: "s", values: map[string]float64{"taskd": d.Started.Seconds()}},
		{name: fmt.Sprintf("taskd RSS after the scan, %d tasks", n), unit: "MiB", values: map[string]float64{"taskd": mib(s.rss)}},
	}, nil
}

func (b *bench) queued() (row, error) {
	r := row{name: "memory per queued job", unit: "KiB", values: map[string]float64{}}
	// taskd: RSS with n queued tasks, less RSS with none.
	rssWith := func(n int) (int64, error) {
		root := b.dir("root")
		list := filepath.Join(root, "bench")
		os.MkdirAll(list, 0o700)
		os.WriteFile(filepath.Join(list, "gate.json"), []byte(`{"id": "gate", "subject": "a gate nobody opens", "description": "", "activeForm": "gating", "status": "pending", "blocks": [], "blockedBy": []}`), 0o644)
		for i := 1; i <= n; i++ {
			id := strconv.Itoa(i)
			if err := os.WriteFile(filepath.Join(list, id+".json"), taskJSON(id, "true", `"gate"`), 0o644); err != nil {
				return 0, err
			}
		}
		d, err := b.startTaskd(root, 2)
		if err != nil {
			return 0, err
		}
		defer d.Stop()
		defer os.RemoveAll(root)
		s, err := readProc(d.Pid())
		return s.rss, err
	}
	base, err := rssWith(0)
	if err != nil {
		return r, err
	}
	full, err := rssWith(*queuedFlag)
	if err != nil {
		return r, err
	}
	r.values["taskd"] = float64(full-base) / 1024 / float64(*queuedFlag)
	// nq and tsp: PSS of everything they run with jobs queued behind a gate.
	m := *peerQueued
	nqDir := b.dir("nq")
	nqEnv := append(os.Environ(), "NQDIR="+nqDir)
	nq := func(args ...string) error {
		c := exec.Command("nq", append([]string{"-q"}, args...)...)
		c.Env = nqEnv
		return c.Run()
	}
	if err := nq("sleep", "3600"); err != nil {
		return r, err
	}
	p0 := pssOf(processesWithEnv("NQDIR=" + nqDir))
	for range m {
		if err := nq("true"); err != nil {
			return r, err
		}
	}
	p1 := pssOf(processesWithEnv("NQDIR=" + nqDir))
	killAll(processesWithEnv("NQDIR=" + nqDir))
	r.values["nq"] = float64(p1-p0) / 1024 / float64(m)

	env := b.tspEnv()
	var sock string
	for _, kv := range env {
		if strings.HasPrefix(kv, "TS_SOCKET=") {
			sock = kv
		}
	}
	if _, err := tsp(env, "-S", "1"); err != nil {
		return r, err
	}
	if _, err := tsp(env, "sleep", "3600"); err != nil {
		return r, err
	}
	waitFor(5*time.Second, func() bool { return len(processesWithEnv(sock)) >= 3 })
	t0 := pssOf(processesWithEnv(sock))
	for range m {
		if _, err := tsp(env, "true"); err != nil {
			killAll(processesWithEnv(sock))
			return r, fmt.Errorf("tsp: %w", err)
		}
	}
	t1 := pssOf(processesWithEnv(sock))
	tsp(env, "-K")
	killAll(processesWithEnv(sock))
	r.values["tsp"] = float64(t1-t0) / 1024 / float64(m)
	r.note = fmt.Sprintf("taskd: %d pending tasks, nq/tsp: %d queued jobs", *queuedFlag, m)
	return r, nil
}

// pssOf sums the proportional set size of pids, in bytes.
func pssOf(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if err == nil {
			total += statusField(data, "Pss") * 1024
		}
	}
	return total
}

// killAll kills the processes the benchmark started (found by the private
// directory in their environment).
func killAll(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// --- output ---

func printTable(rows []row) {
	fmt.Println()
	fmt.Println("| measurement | taskd | nq | tsp | taskd/nq | taskd/tsp | floor | note |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		cell := func(tool string) string {
			v, ok := r.values[tool]
			if !ok {
				return "—"
			}
			return format(v) + unitSuffix(r.unit)
		}
		ratio := func(peer string) string {
			t, ok1 := r.values["taskd"]
			p, ok2 := r.values[peer]
			if !ok1 || !ok2 || p == 0 {
				return "—"
			}
			return fmt.Sprintf("%.2f×", t/p)
		}
		fl := "—"
		if r.floor != 0 {
			fl = format(r.floor) + unitSuffix(r.unit)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name, cell("taskd"), cell("nq"), cell("tsp"), ratio("nq"), ratio("tsp"), fl, r.note)
	}
}

func unitSuffix(u string) string {
	if u == "" {
		return ""
	}
	return " " + u
}

func format(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func median(s []float64) float64 {
	s = slices.Clone(s)
	slices.Sort(s)
	return s[len(s)/2]
}

func rounded(s []float64) []string {
	var out []string
	for _, v := range s {
		out = append(out, format(v))
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mib(b int64) float64        { return float64(b) / (1 << 20) }

func cpus() int {
	data, _ := os.ReadFile("/proc/cpuinfo")
	return bytes.Count(data, []byte("\nprocessor")) + 1
}

func loadavg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// waitFor polls cond every half millisecond until it holds.
func waitFor(timeout time.Duration, cond func() bool) error {
	return taskdrun.WaitFor(timeout, 500*time.Microsecond, cond)
}
