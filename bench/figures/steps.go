package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// A peersRow is a row of bench/peers -json.
type peersRow struct {
	Name   string             `json:"name"`
	Unit   string             `json:"unit"`
	Floor  float64            `json:"floor"`
	Values map[string]float64 `json:"values"`
	Note   string             `json:"note"`
}

// peersRows are bench/peers' rows of the last run, for the claim's
// comparison with starting a process.
var peersRows []peersRow

func peers(out *bytes.Buffer) error {
	file, done, err := tempFile("peers.json")
	if err != nil {
		return err
	}
	defer done()
	args := []string{"run", "./bench/peers", "-json", file}
	if *quick {
		args = append(args, "-n", "200", "-runs", "1", "-latency", "15", "-idle", "3s", "-scan", "10000", "-queued", "2000", "-settle", "30s")
	}
	text, err := command(nil, "go", args...)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &peersRows); err != nil {
		return err
	}
	fmt.Fprintf(out, "### taskd, nq and task-spooler\n\n`go run ./bench/peers` (section [Benchmarks](#benchmarks)); the ratios are taskd's figure over the peer's, the floor is Go doing the job's work directly, all in the same run.\n\n")
	fmt.Fprintln(out, "| measurement | taskd | nq | tsp | taskd/nq | taskd/tsp | floor | note |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|")
	for _, r := range peersRows {
		cell := func(tool string) string {
			v, ok := r.Values[tool]
			if !ok {
				return "—"
			}
			return num(v) + unit(r.Unit)
		}
		ratio := func(peer string) string {
			t, ok1 := r.Values["taskd"]
			p, ok2 := r.Values[peer]
			if !ok1 || !ok2 || p == 0 {
				return "—"
			}
			return fmt.Sprintf("%.2f×", t/p)
		}
		fl := "—"
		if r.Floor != 0 {
			fl = num(r.Floor) + unit(r.Unit)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Name, cell("taskd"), cell("nq"), cell("tsp"), ratio("nq"), ratio("tsp"), fl, r.Note)
	}
	// The lines bench/peers prints after its table: the machine's state.
	if _, after, ok := strings.Cut(text, "\n\n"); ok {
		for _, line := range strings.Split(after, "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "|") {
				fmt.Fprintf(out, "\n%s\n", line)
			}
		}
	}
	out.WriteString("\n")
	return nil
}

// peersValue returns taskd's value (or the floor) of the first row whose
// name starts with prefix.
func peersValue(prefix string, floor bool) (float64, bool) {
	for _, r := range peersRows {
		if strings.HasPrefix(r.Name, prefix) {
			if floor {
				return r.Floor, r.Floor != 0
			}
			v, ok := r.Values["taskd"]
			return v, ok
		}
	}
	return 0, false
}

// A costReport is what bench/cost -json writes: the daemon's figures per
// task (the first build's), the floor's, and what the floor does.
type costReport struct {
	Builds    []costFigures `json:"builds"`
	Floor     costFigures   `json:"floor"`
	FloorDoes string        `json:"floorDoes"`
}

type costFigures struct {
	CPU         float64 `json:"cpuPerTaskMs"`
	Syscalls    float64 `json:"syscallsPerTask"`
	OwnSyscalls float64 `json:"ownSyscallsPerTask"`
}

func cost(out *bytes.Buffer) error {
	file, done, err := tempFile("cost.json")
	if err != nil {
		return err
	}
	defer done()
	args := []string{"run", "./bench/cost", "-json", file}
	if *quick {
		args = append(args, "-n", "200", "-reps", "1", "-strace", "50")
	}
	text, err := command(nil, "go", args...)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var r costReport
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	summary, err := costSummary(r)
	if err != nil {
		return err
	}
	how := "`go run ./bench/cost`"
	if *quick {
		how = "`go run ./bench/cost -n 200 -reps 1 -strace 50`"
	}
	fmt.Fprintf(out, "### What a task costs the daemon\n\n%s (section [Benchmarks](#benchmarks)): the CPU time of the `taskd run` process alone (user and system, not the agents it starts) and its system calls, per task of `true` with one worker, beside the floor measured the same way in the same run.\n\n%s\n%s\n\n", how, text, summary)
	return nil
}

// costSummary says, from bench/cost's figures, what the floor costs per
// task and the daemon's figures over it.
func costSummary(r costReport) (string, error) {
	if len(r.Builds) == 0 || r.Floor.CPU == 0 {
		return "", fmt.Errorf("bench/cost gave no figures for the daemon or the floor: %+v", r)
	}
	d, f := r.Builds[0], r.Floor
	var b strings.Builder
	fmt.Fprintf(&b, "The floor — the same durable writes, folders and process start done directly by Go, and nothing else — costs %s ms of CPU", num(f.CPU))
	if f.Syscalls > 0 {
		fmt.Fprintf(&b, " and %s system calls (%s without the Go runtime's timed calls)", num(f.Syscalls), num(f.OwnSyscalls))
	}
	fmt.Fprintf(&b, " per task on this machine; the daemon costs %.2f× that in CPU", d.CPU/f.CPU)
	if f.Syscalls > 0 && f.OwnSyscalls > 0 {
		fmt.Fprintf(&b, " and %.2f× in system calls (%.2f× without the timed calls)", d.Syscalls/f.Syscalls, d.OwnSyscalls/f.OwnSyscalls)
	}
	b.WriteString(".")
	if d.CPU > f.CPU {
		fmt.Fprintf(&b, " Of its %s ms per task, %s ms is the work the contract requires done the plainest way, %s ms its own.", num(d.CPU), num(f.CPU), num(d.CPU-f.CPU))
	}
	return b.String(), nil
}

func writes(out *bytes.Buffer) error {
	args := []string{"test", "-run", "^$", "-bench", "^Benchmark(Update|BaselineDurableWrite|BaselineFsync|Read|ParseMarshal)$", "./taskfile"}
	if *quick {
		args = append(args, "-benchtime", "200x")
	} else {
		args = append(args, "-benchtime", "1000x", "-count", "5")
	}
	text, err := command(nil, "go", args...)
	if err != nil {
		return err
	}
	b := parseBench(text)
	us := func(name string) float64 { return b[name]["ns/op"] / 1000 }
	fsync, durable := us("BenchmarkBaselineFsync"), us("BenchmarkBaselineDurableWrite")
	if fsync == 0 || durable == 0 {
		return fmt.Errorf("missing baselines in:\n%s", text)
	}
	claim := us("BenchmarkUpdate/kept")
	fmt.Fprintf(out, "### A state change, and the claim\n\n`go test -bench . ./taskfile`")
	if !*quick {
		fmt.Fprintf(out, " (1,000 operations, median of 5 runs)")
	}
	fmt.Fprintf(out, "; the baselines are the same bytes written without taskd, in the same run.\n\n")
	fmt.Fprintln(out, "| operation | time | against one fsync | against a bare durable write |")
	fmt.Fprintln(out, "|---|---|---|---|")
	for _, r := range []struct{ name, bench string }{
		{"one fsync: a new file written, fsynced, renamed (baseline)", "BenchmarkBaselineFsync"},
		{"bare durable write: the same, and the directory fsynced (baseline)", "BenchmarkBaselineDurableWrite"},
		{"`Dir.Update`, lock directories kept (the daemon's writes, the claim included)", "BenchmarkUpdate/kept"},
		{"`Dir.Update`, a lock directory made and removed (other writers)", "BenchmarkUpdate/made"},
		{"`Dir.Read`", "BenchmarkRead"},
		{"parse and encode a task", "BenchmarkParseMarshal"},
	} {
		v := us(r.bench)
		fmt.Fprintf(out, "| %s | %s µs | %.2f× | %.2f× |\n", r.name, num(v), v/fsync, v/durable)
	}
	fmt.Fprintf(out, "\nThe claim (status `in_progress`, state `running`, attempt and start time, written before an agent starts) is one such update: %s µs, %.1f single fsyncs", num(claim), claim/fsync)
	if rate, ok := peersValue("throughput, ", true); ok {
		start := 1e6 / rate
		fmt.Fprintf(out, ", %.0f%% of the %s µs Go takes to start `true` (the throughput floor with one worker above)", 100*claim/start, num(start))
	}
	fmt.Fprintf(out, ".\n\n")
	return nil
}

func navigation(out *bytes.Buffer) error {
	text, err := command(nil, "go", "test", "-run", "^$", "-bench", "Navigate", "./navigator", "./daemon", "./cmd/taskd")
	if err != nil {
		return err
	}
	b := parseBench(text)
	start := b["BenchmarkCLINavigate/startup"]["ms/median"]
	if start == 0 {
		return fmt.Errorf("missing BenchmarkCLINavigate/startup in:\n%s", text)
	}
	fmt.Fprintf(out, "### The navigator\n\n`go test -bench Navigate ./navigator ./daemon ./cmd/taskd`\n\n")
	fmt.Fprintln(out, "| operation | result | against the baseline |")
	fmt.Fprintln(out, "|---|---|---|")
	for _, r := range []struct{ name, bench string }{
		{"`navigator.Navigate` + response JSON, an advance", "BenchmarkNavigate/advance"},
		{"the same, a fork", "BenchmarkNavigate/fork"},
		{"the daemon's in-memory advance: parse the task, navigate, write-through, encode", "BenchmarkNavigateWrite/bytes"},
	} {
		ns := b[r.bench]["ns/op"]
		fmt.Fprintf(out, "| %s | %s µs (%s per second) | — |\n", r.name, num(ns/1000), thousands(1e9/ns))
	}
	for _, r := range []struct{ name, bench string }{
		{"`taskd version`: a process starting (baseline)", "BenchmarkCLINavigate/startup"},
		{"`taskd navigate` on a task file, reading the current step", "BenchmarkCLINavigate/current"},
		{"`taskd navigate --result passed`: an advance, written durably under the locks", "BenchmarkCLINavigate/advance"},
	} {
		v := b[r.bench]["ms/median"]
		fmt.Fprintf(out, "| %s | median %s ms | %.2f× |\n", r.name, num(v), v/start)
	}
	out.WriteString("\n")
	return nil
}

var logLine = regexp.MustCompile(`^\s*\S+_test\.go:\d+: `)

// logged returns the test log lines of text that start with prefix,
// without the file:line.
func logged(text, prefix string) []string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		line = logLine.ReplaceAllString(line, "")
		if strings.HasPrefix(line, prefix) {
			lines = append(lines, line)
		}
	}
	return lines
}

func storm(out *bytes.Buffer) error {
	env := []string{}
	if *quick {
		env = append(env, "TASKD_STORM_TASKS=200", "TASKD_STORM_KILLS=5")
	}
	// crash.sh runs the storm, then the same seed without kills, and
	// prints the comparison as its last line.
	text, err := command(env, "bench/crash.sh")
	if err != nil {
		return err
	}
	lines := logged(text, "storm: ")
	summary := logged(text, "agents started per task: ")
	if len(lines) < 2 || len(summary) != 1 {
		return fmt.Errorf("no storm counts in:\n%s", tail(text, 40))
	}
	how := "`bench/crash.sh`"
	if *quick {
		how = "`TASKD_STORM_TASKS=200 TASKD_STORM_KILLS=5 bench/crash.sh`"
	}
	fmt.Fprintf(out, "### Crash storm\n\n%s (section [Crash storm](#crash-storm)): every check passed.\n\n```\n%s\n%s\n```\n\n", how, strings.Join(lines[1:], "\n"), summary[0])
	return nil
}

func writers(out *bytes.Buffer) error {
	args := []string{"test", "-count=1", "-timeout", "30m", "-run", "^TestConcurrentWriters$", "-v", "./daemon"}
	if !*quick {
		args = append(args[:1], append([]string{"-tags", "stress"}, args[1:]...)...)
	}
	text, err := command(nil, "go", args...)
	if err != nil {
		return err
	}
	lines := logged(text, "writers: ")
	if len(lines) == 0 {
		return fmt.Errorf("no writers line in:\n%s", tail(text, 40))
	}
	how := "`go test -tags stress -run TestConcurrentWriters -v ./daemon`"
	if *quick {
		how = "`go test -run TestConcurrentWriters -v ./daemon` (the short version)"
	}
	fmt.Fprintf(out, "### Concurrent writers\n\n%s (section [Concurrent writers](#concurrent-writers)):\n\n```\n%s\n```\n\n", how, strings.Join(lines, "\n"))
	return nil
}

var remoteLine = regexp.MustCompile(`(local runner, .*|\d+ worker\(s\) x .*|remote overhead per attempt, .*)$`)

func remote(out *bytes.Buffer) error {
	tasks, jobs, reps := "200", "100", "5"
	if *quick {
		tasks, jobs, reps = "60", "40", "3"
	}
	text, err := command(nil, "go", "test", "-count=1", "-timeout", "30m", "./bench/remote", "-run", "^$", "-bench", ".", "-benchtime", "1x",
		"-tasks", tasks, "-jobs", jobs, "-reps", reps)
	if err != nil {
		return err
	}
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if m := remoteLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			lines = append(lines, m[1])
		}
	}
	if len(lines) < 5 {
		return fmt.Errorf("missing results in:\n%s", tail(text, 40))
	}
	fmt.Fprintf(out, "### Agents on other machines\n\n`go test ./bench/remote -run '^$' -bench . -benchtime 1x -tasks %s` ([distributed.md](distributed.md)): %s jobs of `sleep 0.2` through a NATS JetStream server and `taskd worker` processes on this machine, against the local runner in the same run; the ideal ratio with W workers is W. The overhead per attempt: %s jobs of `true` one at a time through one worker against the local runner, %s interleaved runs (`-bench Overhead -jobs %s -reps %s`).\n\n```\n%s\n```\n\n", tasks, tasks, jobs, reps, jobs, reps, strings.Join(lines, "\n"))
	return nil
}

func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		return thousands(v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// thousands formats v rounded, with commas between thousands.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func unit(u string) string {
	if u == "" {
		return ""
	}
	return " " + u
}

func median(s []float64) float64 {
	s = slices.Clone(s)
	slices.Sort(s)
	return s[len(s)/2]
}
