// Command cost measures what one task costs the daemon itself: the CPU
// time of the `taskd run` process (user and system, its own threads
// only, not the agents it starts) and the system calls it makes, per task
// of `true` run through the exec profile with -concurrency slots (one
// unless told), beside the floor: the same durable work done directly.
// With -base it measures a second build, of a git revision, in the same
// run, the builds taking turns, and prints the ratios.
//
//	go run ./bench/cost [-n 500] [-reps 3] [-strace 200] [-concurrency 1] [-base main] [-json FILE]
//
// The floor (floor.go) is this program run again as a process of its
// own, which does for each task, in a list directory of its own on the
// same file system, what the contract requires of a task of `true` and
// nothing else: the task file read, written durably as the claim before
// the agent starts and as the end after, the run folder with its files,
// `sh -c true` started with os/exec in a process group of its own with
// two pipes and waited for, three event lines. It takes its turn with
// the builds and is measured as they are, so the ratio of a build to the
// floor is what the daemon's own work adds to what the file system and
// the process start cost on this machine.
//
// With -concurrency P the daemon has P slots and the floor P workers,
// goroutines each taking the next task of the one list directory. Above
// one, the first build is also measured with one slot, and the floor with
// one worker and with its P workers each in a list directory of its own
// (all task files of a list share one directory, whose lock the kernel
// takes for every file created or renamed in it); the tasks per second
// of each over its one-worker form, run by run, say what a second worker
// gains, and whether the one directory is what holds it back.
//
// CPU comes from /proc/PID/stat (utime and stime, which count every
// thread the process ever had) read after the daemon's startup scan and
// again when the last task has succeeded and the daemon is idle, divided
// by the tasks; the median of -reps runs. System calls come from
// `strace -f` attached to the idle daemon (all its threads) before the
// tasks are dropped and detached once it is idle again: a call counts as
// the daemon's when its thread is the daemon's, or a process it forked
// that has not yet replaced itself with the agent (execve). The count
// varies far less with the machine's load than the time does (not by
// nothing: some of the daemon's work depends on timing), so a change is
// judged by both, each against the other build of the same run.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskd/taskd/bench/taskdrun"
)

var (
	nFlag      = flag.Int("n", 500, "tasks of true per CPU run")
	repsFlag   = flag.Int("reps", 3, "CPU runs per build (the median is shown)")
	straceFlag = flag.Int("strace", 200, "tasks of true in the run under strace (0: no system call count)")
	baseFlag   = flag.String("base", "", "also measure taskd built from this git revision, in the same run")
	jsonFlag   = flag.String("json", "", "also write the results as JSON to this file (for bench/figures)")
	topFlag    = flag.Int("top", 12, "system calls listed by name, the most frequent first")
	concFlag   = flag.Int("concurrency", 1, "the daemon's slots, and the floor's workers; above 1 the first build is also measured with one slot, and the floor with its workers each in a list directory of its own and with one worker")
	floorFlag  = flag.String("floor", "", "internal: be the floor process, in these list directories (separated as in PATH) holding -n tasks each, with -concurrency workers (cost runs itself so)")
)

func main() {
	flag.Parse()
	run := run
	if *floorFlag != "" {
		run = func() error { return floorMain(filepath.SplitList(*floorFlag), *nFlag, *concFlag) }
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(1)
	}
}

// A Build is one taskd binary and its figures, or the floor's.
type Build struct {
	Name string `json:"name"`
	bin  string
	// workers is the daemon's slots or the floor's workers; the floor
	// (floor.go), which runs no taskd, works in lists list directories.
	floor          bool
	workers, lists int
	// CPUPerTask is the daemon's CPU time per task, in milliseconds:
	// the median of the runs, and every run's figure.
	CPUPerTask float64   `json:"cpuPerTaskMs"`
	CPURuns    []float64 `json:"cpuRunsMs"`
	// Rate is tasks per second from the first file dropped to the
	// last task succeeded, the median of the runs.
	Rate float64 `json:"tasksPerSecond"`
	// Syscalls is the daemon's system calls per task, ByName by name.
	Syscalls float64 `json:"syscallsPerTask"`
	// OwnSyscalls leaves out the Go runtime's timed calls (sleeps,
	// futexes, preemption signals), which follow the run's duration;
	// ForkedSyscalls is the share made between fork and exec.
	OwnSyscalls    float64            `json:"ownSyscallsPerTask"`
	ForkedSyscalls float64            `json:"forkedSyscallsPerTask"`
	ByName         map[string]float64 `json:"syscallsByName"`
	// TaskFileOpens is the opens of a task file (N.json) per task.
	TaskFileOpens float64 `json:"taskFileOpensPerTask"`
	// OverFloor is a build's figures over the floor's, measured in the
	// same run.
	OverFloor *Ratios `json:"overFloor,omitempty"`
}

// Ratios are one set of figures over another's.
type Ratios struct {
	CPU         float64 `json:"cpuPerTask"`
	Syscalls    float64 `json:"syscallsPerTask"`
	OwnSyscalls float64 `json:"ownSyscallsPerTask"`
}

// A Report is what -json writes: the builds, the floor and what it does.
type Report struct {
	Builds    []*Build `json:"builds"`
	Floor     *Build   `json:"floor"`
	FloorDoes string   `json:"floorDoes"`
}

// A measured is the process whose cost per task is measured: a daemon,
// or the floor.
type measured interface {
	Pid() int
	// run has n tasks done and returns once they are.
	run(n int) error
	Stop()
}

// start starts b's process for n tasks, idle.
func (b *Build) start(work string, n int) (measured, error) {
	if b.floor {
		return startFloor(work, n, b.workers, b.lists)
	}
	return start(work, b.bin, b.workers)
}

func run() error {
	if _, err := os.Stat("go.mod"); err != nil {
		return errors.New("run it from the module's root")
	}
	if *straceFlag > 0 {
		if _, err := exec.LookPath("strace"); err != nil {
			return errors.New("strace is not installed (scripts/install-tools strace), or run with -strace 0")
		}
	}
	work, err := os.MkdirTemp("", "taskd-cost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	p := *concFlag
	if p < 1 || *nFlag%p != 0 {
		return errors.New("-concurrency must be at least 1 and divide -n")
	}
	builds := []*Build{{Name: "this tree", workers: p}}
	if *baseFlag != "" {
		builds = append(builds, &Build{Name: *baseFlag, workers: p})
	}
	for _, b := range builds {
		if b.bin, err = build(work, b.Name); err != nil {
			return err
		}
	}
	fl := &Build{Name: "floor", floor: true, workers: p, lists: 1}
	all := append(slices.Clip(builds), fl)
	var others []*Build // measured at other concurrencies, beside the table
	if p > 1 {
		others = []*Build{
			{Name: builds[0].Name + ", one slot", bin: builds[0].bin, workers: 1},
			{Name: fmt.Sprintf("floor, %d workers in %d list directories", p, p), floor: true, workers: p, lists: p},
			{Name: "floor, one worker", floor: true, workers: 1, lists: 1},
		}
		all = append(all, others...)
	}
	rates := map[*Build][]float64{}
	for rep := range *repsFlag {
		// The builds and the floor take turns, so that the machine's load
		// falls on each.
		for i := range all {
			b := all[(i+rep)%len(all)]
			cpu, rate, err := cpuRun(work, b, *nFlag)
			if err != nil {
				return fmt.Errorf("%s: %w", b.Name, err)
			}
			b.CPURuns = append(b.CPURuns, cpu)
			rates[b] = append(rates[b], rate)
			fmt.Fprintf(os.Stderr, "cost: %s, run %d: %.3f ms of CPU per task, %.0f tasks/s\n", b.Name, rep+1, cpu, rate)
		}
	}
	for _, b := range all {
		b.CPUPerTask, b.Rate = median(b.CPURuns), median(rates[b])
		if *straceFlag > 0 {
			if err := straceRun(work, b, *straceFlag); err != nil {
				return fmt.Errorf("%s: %w", b.Name, err)
			}
		}
	}
	for _, b := range builds {
		b.OverFloor = &Ratios{CPU: ratio(b.CPUPerTask, fl.CPUPerTask), Syscalls: ratio(b.Syscalls, fl.Syscalls), OwnSyscalls: ratio(b.OwnSyscalls, fl.OwnSyscalls)}
	}
	print(builds, fl)
	if p > 1 {
		fmt.Println()
		for _, b := range append([]*Build{builds[0], fl}, others...) {
			fmt.Printf("%s at %d: %.3f ms of CPU per task, %.0f tasks/s (runs: %.3f ms; %.0f tasks/s)", b.Name, b.workers, b.CPUPerTask, b.Rate, b.CPURuns, rates[b])
			if b.Syscalls > 0 {
				fmt.Printf(", %.1f system calls per task, %.2f fsyncs", b.Syscalls, b.ByName["fsync"])
			}
			fmt.Println()
		}
		// The ratios of runs made one after the other, which the
		// machine's load moves less than it moves each.
		for _, pair := range [][2]*Build{{builds[0], others[0]}, {fl, others[2]}, {others[1], others[2]}} {
			by := make([]float64, len(rates[pair[0]]))
			for i := range by {
				by[i] = rates[pair[0]][i] / rates[pair[1]][i]
			}
			fmt.Printf("tasks/s of %s at %d over %s at 1: %.2f× (median; by run %.2f)\n", pair[0].Name, p, pair[1].Name, median(by), by)
		}
	}
	if *jsonFlag != "" {
		data, _ := json.MarshalIndent(Report{Builds: builds, Floor: fl, FloorDoes: floorDoes}, "", "  ")
		return os.WriteFile(*jsonFlag, append(data, '\n'), 0o644)
	}
	return nil
}

// ratio is a over b, 0 when b is.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// build builds taskd from the working tree, or from a git revision
// exported (git archive) into the work directory.
func build(work, name string) (string, error) {
	bin, _ := filepath.Abs(filepath.Join(work, fmt.Sprintf("taskd-%d", len(name))+strconv.FormatInt(time.Now().UnixNano(), 36)))
	src := "."
	if name != "this tree" {
		src = filepath.Join(work, "src-"+filepath.Base(bin))
		if err := os.Mkdir(src, 0o755); err != nil {
			return "", err
		}
		archive := exec.Command("sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", name, src)
		if out, err := archive.CombinedOutput(); err != nil {
			return "", fmt.Errorf("export %s: %w: %s", name, err, out)
		}
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/taskd")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w: %s", name, err, out)
	}
	return bin, nil
}

// print writes the table: each build's figures, the ratio of the first
// to the second (-base), the floor's, and the first build's over the
// floor's; then what the floor does.
func print(builds []*Build, fl *Build) {
	fmt.Printf("| measurement | %s |", builds[0].Name)
	if len(builds) > 1 {
		fmt.Printf(" %s | ratio |", builds[1].Name)
	}
	fmt.Printf(" floor | %s ÷ floor |\n", builds[0].Name)
	fmt.Print("|---|---|")
	if len(builds) > 1 {
		fmt.Print("---|---|")
	}
	fmt.Println("---|---|")
	times := func(a, b float64) string {
		if b == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	row := func(name, format string, v func(*Build) float64) {
		this := v(builds[0])
		fmt.Printf("| %s | "+format+" |", name, this)
		if len(builds) > 1 {
			base := v(builds[1])
			fmt.Printf(" "+format+" | %s |", base, times(this, base))
		}
		fmt.Printf(" "+format+" | %s |\n", v(fl), times(this, v(fl)))
	}
	row(fmt.Sprintf("CPU per task of `true`, P=%d (median of %d × %d tasks)", *concFlag, *repsFlag, *nFlag), "%.3f ms", func(b *Build) float64 { return b.CPUPerTask })
	row("tasks per second in those runs", "%.0f", func(b *Build) float64 { return b.Rate })
	if *straceFlag > 0 {
		row(fmt.Sprintf("system calls per task (%d tasks under strace)", *straceFlag), "%.1f", func(b *Build) float64 { return b.Syscalls })
		row("— of which not the Go runtime's timed calls (sleeps, futexes, preemption)", "%.1f", func(b *Build) float64 { return b.OwnSyscalls })
		row("— of which made by a forked agent before its execve", "%.1f", func(b *Build) float64 { return b.ForkedSyscalls })
		row("opens of a task file per task", "%.2f", func(b *Build) float64 { return b.TaskFileOpens })
		for _, n := range topNames(append(slices.Clip(builds), fl), *topFlag) {
			row("— `"+n+"` per task", "%.2f", func(b *Build) float64 { return b.ByName[n] })
		}
	}
	fmt.Printf("\nThe floor is %s.\n", floorDoes)
}

// topNames are the top system calls by name, the most frequent in any
// of builds first.
func topNames(builds []*Build, top int) []string {
	names := map[string]float64{}
	for _, b := range builds {
		for n, v := range b.ByName {
			names[n] = max(names[n], v)
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.SortFunc(sorted, func(a, b string) int {
		if names[a] != names[b] {
			if names[a] > names[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return sorted[:min(top, len(sorted))]
}

// daemon is `taskd run` on a fresh root.
type daemon struct{ *taskdrun.Daemon }

// start starts a daemon with concurrency slots and returns once its
// startup scan is done and it is idle.
func start(work, bin string, concurrency int) (*daemon, error) {
	root, err := os.MkdirTemp(work, "root-")
	if err != nil {
		return nil, err
	}
	os.Chmod(root, 0o700)
	cfg := filepath.Join(root, ".config.json")
	if err := os.WriteFile(cfg, daemonConfig(concurrency), 0o600); err != nil {
		return nil, err
	}
	events := filepath.Join(root, "bench", ".taskd", "events.jsonl")
	td, err := taskdrun.Start(taskdrun.Options{
		Bin: bin, Root: root, Config: cfg, LogLevel: "warn", Env: []string{"HOME=" + root},
		Ready:   func(*taskdrun.Daemon) bool { _, err := os.Stat(events); return err == nil },
		Timeout: 30 * time.Second, Echo: os.Stderr,
	})
	if err != nil {
		return nil, err
	}
	d := &daemon{td}
	idle(d.Pid())
	return d, nil
}

// daemonConfig is the configuration file of a daemon with slots slots.
func daemonConfig(slots int) []byte {
	return fmt.Appendf(nil, `{"concurrency": %d}`, slots)
}

// cpu is process pid's user and system time so far, in clock ticks: its
// threads', not its children's.
func cpu(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

// idle waits until process pid's CPU time has not moved for half a
// second.
func idle(pid int) {
	last, since := cpu(pid), time.Now()
	for time.Since(since) < 500*time.Millisecond {
		time.Sleep(50 * time.Millisecond)
		if now := cpu(pid); now != last {
			last, since = now, time.Now()
		}
	}
}

// clockTick is the kernel's clock tick for /proc times: USER_HZ, 100 on
// every Linux architecture taskd runs on.
const clockTick = 10 * time.Millisecond

// cpuRun has n tasks done by b's process and returns its CPU time per
// task, from idle before to idle after, and the tasks per second.
func cpuRun(work string, b *Build, n int) (cpuMs, rate float64, err error) {
	p, err := b.start(work, n)
	if err != nil {
		return 0, 0, err
	}
	defer p.Stop()
	before := cpu(p.Pid())
	t0 := time.Now()
	if err := p.run(n); err != nil {
		return 0, 0, err
	}
	rate = float64(n) / time.Since(t0).Seconds()
	idle(p.Pid())
	ticks := cpu(p.Pid()) - before
	return float64(ticks) * float64(clockTick) / float64(time.Millisecond) / float64(n), rate, nil
}

// run drops n tasks of true into the list, each written to a dot-file
// and renamed in (as a producer should), and waits for all to succeed.
func (d *daemon) run(n int) error {
	for i := 1; i <= n; i++ {
		if err := taskdrun.Drop(d.List, strconv.Itoa(i), taskBody(i)); err != nil {
			return err
		}
	}
	return taskdrun.WaitFor(10*time.Minute, 5*time.Millisecond, func() bool { return taskdrun.Succeeded(d.List) >= n })
}

// taskBody is task i of the run: `true` through the exec profile.
func taskBody(i int) []byte {
	return fmt.Appendf(nil, `{"id": "%d", "subject": "cost %d", "description": "", "activeForm": "costing", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`, i, i)
}

func median(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	s = slices.Clone(s)
	slices.Sort(s)
	return s[len(s)/2]
}
