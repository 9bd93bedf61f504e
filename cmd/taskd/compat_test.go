package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/taskd/taskd/navigator/flowtrace"
	"github.com/taskd/taskd/taskfile"
)

// cliDifference is where `taskd navigate` answers a recorded call
// differently from the pure navigator, because it reads and writes task
// files through taskfile and loads workflows through the validating loader
// (in Compatible mode: traps do not stop it).
// docs/navigator.md lists the same cases.
type cliDifference string

const (
	// The workflow has errors other than traps, so the CLI refuses to
	// navigate it.
	rejectedWorkflow cliDifference = "workflow rejected by the validator"
	// The task's id disagrees with its file name: taskfile refuses the file
	// instead of correcting the id.
	idMismatch cliDifference = "id mismatch refused"
	// The file is not JSON: the CLI says so instead of "Task file not found".
	invalidJSON cliDifference = "invalid JSON reported as such"
	// The task lacks fields Claude Code requires: taskfile adds them when it
	// writes.
	filledFields cliDifference = "missing task fields filled in"
)

// rejectedWorkflows are the compat workflows the validator rejects (see
// workflows.TestCatalog).
var rejectedWorkflows = map[string]bool{"synthetic-edges": true, "synthetic-fanout": true, "inline-no-edges": true, "inline-no-start": true}

// TestCompatCLI replays every recorded flow Navigate call through
// `taskd navigate` on real task files (opt-in: TASKD_COMPAT_DIR). Records
// agree with flow except the documented deviations, which must differ
// exactly as documented, and the CLI differences above, which must fail or
// write exactly as described.
func TestCompatCLI(t *testing.T) {
	dir := flowtrace.Dir(t)
	isolate(t)
	recs, err := flowtrace.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string][]string{}
	for _, rec := range recs {
		diff := cliDifferenceOf(rec)
		o, code, stderr := replayCLI(t, dir, rec)
		var problems []string
		switch diff {
		case rejectedWorkflow:
			if code != 1 || !strings.Contains(stderr, "has errors") {
				problems = append(problems, "want the workflow refused, got exit "+strconv.Itoa(code)+": "+stderr)
			}
		case idMismatch:
			if code != 1 || !strings.Contains(stderr, "does not match the file name") {
				problems = append(problems, "want the file refused, got exit "+strconv.Itoa(code)+": "+stderr)
			}
		case invalidJSON:
			if code != 1 || !strings.Contains(stderr, "invalid JSON") {
				problems = append(problems, "want invalid JSON reported, got exit "+strconv.Itoa(code)+": "+stderr)
			}
		case filledFields:
			problems = checkFilled(rec, o)
		default:
			problems = rec.Check(o)
		}
		if len(problems) > 0 {
			t.Errorf("%s (exit %d, stderr %q):\n%s", rec.ID, code, stderr, strings.Join(problems, "\n"))
			continue
		}
		kind := "agree"
		if diff != "" {
			kind = string(diff)
		} else if d := rec.Deviation(); d != "" {
			kind = string(d)
		}
		counts[kind] = append(counts[kind], rec.Key)
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		if k == "agree" {
			t.Logf("%d records agree with flow", len(counts[k]))
			continue
		}
		t.Logf("%d records: %s: %s", len(counts[k]), k, strings.Join(counts[k], " "))
	}
}

func cliDifferenceOf(rec *flowtrace.Record) cliDifference {
	task := rec.Task()
	wf := rec.Input().WorkflowType
	if task != nil {
		if md := task.Object("metadata"); md != nil {
			wf, _ = md.String("workflowType")
		}
	}
	_, threw := rec.Threw()
	switch {
	case rejectedWorkflows[wf]:
		return rejectedWorkflow
	case task != nil && task.Has("id") && !threw && func() bool { id, _ := task.String("id"); return id+".json" != rec.TaskFileName() }():
		return idMismatch
	case func() bool { _, raw := rec.TaskFileRaw(); return raw }():
		return invalidJSON
	case task != nil && !task.Has("status") && !threw:
		return filledFields
	}
	return ""
}

// replayCLI writes the record's task file, runs taskd navigate with the
// record's inputs, and reports what happened.
func replayCLI(t *testing.T, compat string, rec *flowtrace.Record) (o flowtrace.Outcome, code int, stderr string) {
	tmp := t.TempDir()
	in := rec.Input()
	args := []string{"navigate",
		"--workflows", filepath.Join(compat, "workflows"), "--workflows", filepath.Join(compat, "synthetic"),
		"--source-root=" + rec.SourceRoot(), "--project-root=" + in.ProjectRoot,
		"--result=" + in.Result, "--description=" + in.Description, "--step=" + in.StepID, "--workflow=" + in.WorkflowType,
	}
	if a, ok := rec.HasAutonomy(); ok {
		args = append(args, "--autonomy="+strconv.FormatBool(a))
	}
	if inline := rec.InlineWorkflows(); inline != nil {
		wdir := filepath.Join(tmp, "inline")
		for id, data := range inline {
			writeTask(t, filepath.Join(wdir, id+".json"), string(data))
		}
		args = append(args, "--workflows", wdir)
	}
	taskDir := filepath.Join(tmp, "list")
	var path string
	var before []byte
	if name := rec.TaskFileName(); name != "" {
		path = filepath.Join(taskDir, name)
		args = append(args, "--task", path)
		switch raw, isRaw := rec.TaskFileRaw(); {
		case rec.TaskFileMissing():
			os.MkdirAll(taskDir, 0o755)
		case isRaw:
			before = []byte(raw)
		default:
			before = taskfile.MarshalIndent(rec.Task())
		}
		if before != nil {
			writeTask(t, path, string(before))
		}
	}
	stdout, stderr, code := runCLI(t, args...)
	switch code {
	case 0:
		resp, guidance, err := flowtrace.NormalizeJSON([]byte(stdout))
		if err != nil {
			t.Fatalf("%s: stdout is not JSON: %v\n%s", rec.ID, err, stdout)
		}
		o.Response = resp
		if path != "" {
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, before) {
				o.Written = true
				o.TaskAfter = after
				if guidance != "" {
					o.TaskAfter = []byte(strings.Replace(string(after), jsonText(guidance), "<guidance>", 1))
				}
			}
		}
		for _, line := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(line, "[Navigator] WARNING") {
				o.Warnings = append(o.Warnings, line)
			}
		}
	case 3:
		o.Response = []byte(stdout)
	default:
		first, _, _ := strings.Cut(strings.TrimPrefix(stderr, "taskd: "), "\n")
		o.Threw = strings.ReplaceAll(first, tmp+"/list", "<TASKDIR>")
	}
	return o, code, stderr
}

// jsonText returns s as it appears inside a JSON string in a task file.
func jsonText(s string) string {
	q := string(taskfile.MarshalIndent(s))
	return q[1 : len(q)-1]
}

// checkFilled checks a record whose task lacks fields Claude Code requires:
// the response must agree, and the file must hold every field flow wrote,
// with the same values, plus the ones taskfile fills in.
func checkFilled(rec *flowtrace.Record, o flowtrace.Outcome) []string {
	if o.Response == nil {
		return []string{"threw " + o.Threw}
	}
	problems := filterWritten(rec.Check(flowtrace.Outcome{Response: o.Response, Warnings: o.Warnings}))
	after, err := taskfile.ParseValue(o.TaskAfter)
	if err != nil {
		return append(problems, "task file after: "+err.Error())
	}
	got := after.(*taskfile.Object)
	flowAfter := rec.TaskAfter()
	for _, k := range flowAfter.Keys() {
		v, _ := flowAfter.Get(k)
		g, _ := got.Get(k)
		if string(taskfile.MarshalIndent(v)) != string(taskfile.MarshalIndent(g)) {
			problems = append(problems, "field "+k+" differs: "+string(taskfile.MarshalIndent(g)))
		}
	}
	for _, k := range []string{"status", "blocks", "blockedBy"} {
		if !got.Has(k) {
			problems = append(problems, "field "+k+" was not filled in")
		}
	}
	return problems
}

// filterWritten drops the differences about writing, which checkFilled
// checks itself.
func filterWritten(problems []string) []string {
	var out []string
	for _, p := range problems {
		if !strings.HasPrefix(p, "written =") {
			out = append(out, p)
		}
	}
	return out
}
