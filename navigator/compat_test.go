package navigator_test

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/navigator/flowtrace"
	"github.com/taskd/taskd/taskfile"
)

// catalog is a Catalog over parsed workflows; root is every workflow's
// source root.
type catalog struct {
	wfs  map[string]*navigator.Workflow
	root string
}

func (c catalog) Lookup(id string) (*navigator.Workflow, string, bool) {
	wf, ok := c.wfs[id]
	return wf, c.root, ok
}

// TestCompatTrace replays every recorded flow Navigate call through
// Navigate and flow's write-through and compares the response, whether the
// file was written, the file afterwards and the warnings. Records listed in
// flowtrace.Deviations must differ exactly as documented; every other
// record must agree. Opt-in: set TASKD_COMPAT_DIR.
func TestCompatTrace(t *testing.T) {
	dir := flowtrace.Dir(t)
	recs, err := flowtrace.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := flowtrace.Workflows(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]*navigator.Workflow{}
	for id, data := range raw {
		if base[id], err = navigator.Parse(data); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	agree, deviate := 0, map[flowtrace.Deviation][]string{}
	for _, rec := range recs {
		diffs := rec.Check(replay(t, base, rec))
		if len(diffs) > 0 {
			t.Errorf("%s:\n%s", rec.ID, strings.Join(diffs, "\n"))
			continue
		}
		if d := rec.Deviation(); d != "" {
			deviate[d] = append(deviate[d], rec.Key)
		} else {
			agree++
		}
	}
	var seen int
	for d, keys := range deviate {
		sort.Strings(keys)
		t.Logf("%d records deviate as documented (%s): %s", len(keys), d, strings.Join(keys, " "))
		seen += len(keys)
	}
	t.Logf("%d of %d records agree with flow; %d deviate as documented", agree, len(recs), seen)
	if want := len(flowtrace.Deviations()); seen != want && !t.Failed() {
		t.Errorf("%d deviating records checked, %d documented: the list names records the trace does not have", seen, want)
	}
}

// replay performs one record's call the way flow's server would: read the
// task file (missing or unparsable files throw flow's error), navigate,
// and apply the write-through to the file's contents.
func replay(t *testing.T, base map[string]*navigator.Workflow, rec *flowtrace.Record) flowtrace.Outcome {
	cat := catalog{wfs: base, root: rec.SourceRoot()}
	if inline := rec.InlineWorkflows(); inline != nil {
		cat.wfs = map[string]*navigator.Workflow{}
		for id, wf := range base {
			cat.wfs[id] = wf
		}
		for id, data := range inline {
			wf, err := navigator.Parse(data)
			if err != nil {
				t.Fatalf("%s: inline workflow %s: %v", rec.ID, id, err)
			}
			cat.wfs[id] = wf
		}
	}
	var task *navigator.Task
	var doc *taskfile.Object
	if name := rec.TaskFileName(); name != "" {
		path := "<TASKDIR>/" + name
		doc = rec.Task()
		if raw, ok := rec.TaskFileRaw(); ok {
			v, err := taskfile.ParseValue([]byte(raw))
			doc, _ = v.(*taskfile.Object)
			if err != nil {
				doc = nil
			}
		}
		if doc == nil || rec.TaskFileMissing() {
			return flowtrace.Outcome{Threw: navigator.TaskFileError(path).Error()}
		}
		task = flowtrace.NavTask(strings.TrimSuffix(name, ".json"), doc)
	}
	resp, wt, err := navigator.Navigate(cat, task, rec.Input())
	var nm *navigator.NoMatchError
	switch {
	case errors.As(err, &nm):
		data, _ := nm.MarshalJSON()
		return flowtrace.Outcome{Response: data}
	case err != nil:
		return flowtrace.Outcome{Threw: err.Error()}
	}
	out := flowtrace.Outcome{Response: flowtrace.Normalize(resp).AppendJSON(nil)}
	if wt != nil && wt.Mode != navigator.WriteNone {
		w := *wt
		w.Description = flowtrace.NormalizeText(w.Description, resp)
		flowtrace.ApplyFlow(doc, &w)
		out.Written = true
		out.TaskAfter = taskfile.MarshalIndent(doc)
		if w.IDWarning != "" {
			out.Warnings = []string{w.IDWarning}
		}
	}
	return out
}
