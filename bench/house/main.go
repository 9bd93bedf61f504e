// Command house measures how taskd's code is put together, the figures a
// change to its structure is judged by, and prints them as Markdown.
//
//	go run ./bench/house [-dir .] [-v] [-time]
//
// It type-checks the module's non-test files from source (dependencies
// from their export data, built by `go list -export`) and counts:
//
//   - constant-key accesses to metadata.taskd outside package daemon/task:
//     a method of the ordered JSON object (Has, Get, Object, String, Bool,
//     Int, Float, Set, Delete, EnsureObject) called with a string constant
//     as its key on a value that holds metadata.taskd, or a call that
//     hands a function such a value and a string constant. A value holds
//     metadata.taskd when it is Object("taskd"), EnsureObject("taskd") or
//     Get("taskd").(*Object) on an ordered object, or a variable, struct
//     field or parameter it is assigned or passed to, or the result of a
//     function that returns it (followed across the module, without
//     regard to control flow). Sites, distinct keys and writes (Set,
//     Delete, EnsureObject, or a helper that calls one);
//   - the Object("taskd") sites themselves (and EnsureObject, Get), and
//     the files they are in;
//   - the methods declared on daemon.Daemon and job.Job;
//   - exported names per package: exported package-level identifiers and
//     exported methods of the package's types;
//   - function declarations with more than 5 parameters, and the share
//     longer than 80 lines (from `func` to the closing brace);
//   - packages with no _test.go file;
//   - places that tell agent kinds apart by string: an == or != comparison,
//     or a switch case, of a non-constant value with a string constant
//     naming a kind ("claude", "codex", "opencode", "exec") or one kind's
//     output format ("claude-stream", "claude-json", "codex-json",
//     "opencode-json");
//   - with -time, the wall time of `go test -count=1 ./...` (no -race).
//
// -v lists every counted site after the tables. bench/house.sh runs it from
// the module's root.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

var (
	dir     = flag.String("dir", ".", "the module's root directory")
	verbose = flag.Bool("v", false, "list every counted site")
	timed   = flag.Bool("time", false, "also time `go test -count=1 ./...` without -race (slow)")
)

func main() {
	flag.Parse()
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "house:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	root, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	m, err := load(root)
	if err != nil {
		return err
	}
	f := measure(m)
	wall := ""
	if *timed {
		wall = suiteTime(root)
	}
	writeTable(w, f, wall)
	if *verbose {
		writeSites(w, f)
	}
	return nil
}

// suiteTime runs the module's tests once without -race and returns the
// wall time, with the load average it ran under.
func suiteTime(dir string) string {
	cmd := exec.Command("go", "test", "-count=1", "./...")
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start).Round(time.Second)
	s := d.String()
	if err != nil {
		s += " (some tests failed: " + firstFail(out) + ")"
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		s += fmt.Sprintf(", load average %s at the end", strings.Fields(string(load))[0])
	}
	return s
}

// firstFail returns the first FAIL line of go test's output.
func firstFail(out []byte) string {
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL") {
			return strings.TrimSpace(line)
		}
	}
	return "see go test"
}

// writeTable prints the figures as Markdown.
func writeTable(w io.Writer, f *Figures, wall string) {
	writes, helpers := 0, 0
	for _, a := range f.KeyAccesses {
		if a.Write {
			writes++
		}
		if a.Helper {
			helpers++
		}
	}
	widest, most := "", 0
	for rel, n := range f.Exported {
		if n > most || n == most && rel < widest {
			widest, most = rel, n
		}
	}
	pkgs := map[string]bool{}
	files := map[string]bool{}
	for _, s := range f.KindSwitches {
		file, _, _ := strings.Cut(s, ":")
		files[file] = true
		pkgs[filepath.Dir(file)] = true
	}
	rootFiles := map[string]bool{}
	for _, s := range f.TaskdRoots {
		file, _, _ := strings.Cut(s, ":")
		rootFiles[file] = true
	}
	rows := [][2]string{
		{"packages, non-test files, lines", fmt.Sprintf("%d, %d, %d", f.Packages, f.Files, f.Lines)},
		{"largest package", fmt.Sprintf("`%s`, %s of the lines", f.LargestPkg, percent(f.LargestLines, f.Lines))},
		{"constant-key accesses to `metadata.taskd` outside `" + taskPkg + "`", fmt.Sprintf("%d (%d writes, %d through helpers)", len(f.KeyAccesses), writes, helpers)},
		{"distinct keys so accessed", fmt.Sprint(len(f.Keys()))},
		{"the same accesses inside `" + taskPkg + "`", fmt.Sprint(f.KeysInTask)},
		{"`Object(\"taskd\")` sites outside `" + taskPkg + "`, files", fmt.Sprintf("%d, %d", len(f.TaskdRoots), len(rootFiles))},
		{"methods of `daemon.Daemon`", fmt.Sprint(len(f.DaemonMethods))},
		{"methods of `job.Job`, files", fmt.Sprintf("%d, %d", len(f.JobMethods), f.JobMethodFile)},
		{"exported names, most in one package", fmt.Sprintf("%d (`%s`)", most, widest)},
		{fmt.Sprintf("functions with more than %d parameters", maxParams), fmt.Sprint(len(f.WideFuncs))},
		{fmt.Sprintf("functions over %d lines", maxLines), fmt.Sprintf("%d of %d (%s)", len(f.LongFuncs), f.Funcs, percent(len(f.LongFuncs), f.Funcs))},
		{"packages without a test file", fmt.Sprint(len(f.Untested))},
		{"agent kinds told apart by string: places, files, packages", fmt.Sprintf("%d, %d, %d", len(f.KindSwitches), len(files), len(pkgs))},
	}
	if wall != "" {
		rows = append(rows, [2]string{"`go test -count=1 ./...` wall time (no -race)", wall})
	}
	fmt.Fprintln(w, "| figure | count |")
	fmt.Fprintln(w, "|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s |\n", r[0], r[1])
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| package | exported names | test files |")
	fmt.Fprintln(w, "|---|---|---|")
	rels := make([]string, 0, len(f.Exported))
	for rel := range f.Exported {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	for _, rel := range rels {
		tested := "yes"
		if slices.Contains(f.Untested, rel) {
			tested = "**none**"
		}
		fmt.Fprintf(w, "| `%s` | %d | %s |\n", rel, f.Exported[rel], tested)
	}
}

// writeSites lists every counted site under a heading of its figure.
func writeSites(w io.Writer, f *Figures) {
	list := func(title string, items []string) {
		fmt.Fprintf(w, "\n### %s (%d)\n\n", title, len(items))
		for _, s := range items {
			fmt.Fprintf(w, "- %s\n", s)
		}
	}
	var acc []string
	for _, a := range f.KeyAccesses {
		s := fmt.Sprintf("%s %s(%q)", a.Pos, a.Call, a.Key)
		if a.Write {
			s += " write"
		}
		acc = append(acc, s)
	}
	list("constant-key accesses to metadata.taskd", acc)
	list("distinct keys", f.Keys())
	list("Object(\"taskd\") sites", f.TaskdRoots)
	list("methods of daemon.Daemon", f.DaemonMethods)
	list("methods of job.Job", f.JobMethods)
	list("functions with many parameters", f.WideFuncs)
	list("long functions", f.LongFuncs)
	list("packages without a test file", f.Untested)
	list("agent kinds told apart by string", f.KindSwitches)
}

// percent formats n/total as a percentage with one decimal.
func percent(n, total int) string {
	if total == 0 {
		return "0 %"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(total))
}
