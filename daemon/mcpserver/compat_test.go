package mcpserver

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/navigator/flowtrace"
	"github.com/taskd/taskd/taskfile"
)

// TestCompatTraceMCP replays flow's recorded Navigate calls through the
// MCP Navigate tool, over task files in the server's root: the answer's
// text, whether the file was written and the file afterwards must be
// flow's, or differ as the record's documented deviation says (the checks
// of TestCompatTrace in package navigator, here over the tool a client
// calls). Records that load workflows of their own or name another
// project are replayed by TestCompatTrace only: the server's workflows are
// its project's and the built-in ones. Opt-in: set TASKD_COMPAT_DIR.
func TestCompatTraceMCP(t *testing.T) {
	dir := flowtrace.Dir(t)
	recs, err := flowtrace.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := flowtrace.Workflows(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{})
	// flow's workflows, as a project that copied them has them.
	for id, data := range raw {
		write(t, filepath.Join(e.project, ".flow", "workflows", id+".json"), string(data))
	}
	list := filepath.Join(e.root, "flow")
	if err := os.MkdirAll(list, 0o700); err != nil {
		t.Fatal(err)
	}
	replayed, skipped := 0, 0
	deviate := map[string][]string{}
	for _, rec := range recs {
		name := rec.TaskFileName()
		if rec.InlineWorkflows() != nil || rec.SourceRoot() != "" || rec.Input().ProjectRoot != "" ||
			name != "" && !taskfile.ValidID(strings.TrimSuffix(name, ".json")) {
			skipped++
			continue
		}
		replayed++
		o := replayMCP(t, e, list, rec)
		diffs := rec.Check(o)
		if len(diffs) == 0 {
			continue
		}
		if d := mcpDeviation(rec, o, e.project); d != "" {
			deviate[d] = append(deviate[d], rec.Key)
			continue
		}
		t.Errorf("%s:\n%s", rec.ID, strings.Join(diffs, "\n"))
	}
	for d, keys := range deviate {
		t.Logf("%d records deviate as docs/mcp.md says (%s): %s", len(keys), d, strings.Join(keys, " "))
	}
	deviating := 0
	for _, keys := range deviate {
		deviating += len(keys)
	}
	t.Logf("%d of %d records replayed through MCP: %d agree with flow, %d deviate as documented; %d left to TestCompatTrace",
		replayed, len(recs), replayed-deviating, deviating, skipped)
	if replayed == 0 {
		t.Fatal("no record replayed")
	}
}

// replayMCP performs one record's call through the Navigate tool.
func replayMCP(t *testing.T, e *env, list string, rec *flowtrace.Record) flowtrace.Outcome {
	t.Helper()
	args := map[string]any{}
	in := rec.Input()
	for k, v := range map[string]string{"workflowType": in.WorkflowType, "result": in.Result, "description": in.Description, "stepId": in.StepID} {
		if v != "" {
			args[k] = v
		}
	}
	if in.Autonomy != nil {
		args["autonomy"] = *in.Autonomy
	}
	var path string
	var before []byte
	if name := rec.TaskFileName(); name != "" {
		path = filepath.Join(list, name)
		os.Remove(path)
		if !rec.TaskFileMissing() {
			before = taskfile.MarshalIndent(rec.Task())
			if raw, ok := rec.TaskFileRaw(); ok {
				before = []byte(raw)
			}
			write(t, path, string(before))
		}
		args["taskFilePath"] = path
	}
	text, isErr := e.call("Navigate", args)
	if isErr {
		return flowtrace.Outcome{Threw: strings.ReplaceAll(text, list+"/", "<TASKDIR>/")}
	}
	resp, guidance, err := flowtrace.NormalizeJSON([]byte(text))
	if err != nil {
		t.Fatalf("%s: the answer is not JSON: %s", rec.ID, text)
	}
	if v, err := taskfile.ParseValue(resp); err == nil {
		if o, ok := v.(*taskfile.Object); ok {
			// What flow's engine throws, flow's server answers as an
			// error object naming the tool and its arguments.
			if msg, ok := o.String("error"); ok && o.Has("tool") && o.Has("args") {
				return flowtrace.Outcome{Threw: strings.ReplaceAll(msg, list+"/", "<TASKDIR>/")}
			}
			// The recorded calls found these workflows in flow's catalog,
			// which names no source root; here they are the project's.
			if root, _ := o.String("sourceRoot"); root == e.project {
				o.Set("sourceRoot", nil)
				resp = taskfile.MarshalIndent(o)
			}
		}
	}
	out := flowtrace.Outcome{Response: resp}
	if path != "" {
		after, _ := os.ReadFile(path)
		if out.Written = !bytes.Equal(after, before); out.Written {
			if guidance != "" {
				after = []byte(strings.Replace(string(after), jsonString(guidance), jsonString("<guidance>"), 1))
			}
			out.TaskAfter = after
		}
	}
	return out
}

// jsonString is s as the inside of a JSON string.
func jsonString(s string) string {
	data := taskfile.AppendJSON(nil, s)
	return string(data[1 : len(data)-1])
}

// mcpDeviation names the documented difference of taskd mcp's Navigate
// from flow's server (docs/mcp.md, "Where the server answers differently")
// that explains outcome o of rec, or "".
func mcpDeviation(rec *flowtrace.Record, o flowtrace.Outcome, project string) string {
	task := rec.Task()
	switch {
	case strings.Contains(o.Threw, "taskd does not walk it until they are fixed"):
		return "a workflow with errors is refused"
	case strings.Contains(o.Threw, "does not match the file name"), strings.Contains(o.Threw, ": invalid JSON"):
		return "the task file is read as taskd navigate reads it"
	case o.Written && task != nil && !task.Has("status"):
		return "Claude Code's fields are filled in, as taskd navigate does"
	case strings.Contains(string(o.Response), project+"/"):
		return "a project workflow's ./ paths resolve against the session's project"
	}
	return ""
}
