package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// startSubagents starts a daemon with taskd on the agents' PATH, every agent
// type mapped to the exec profile (so exec agents stand in for models);
// the taskd commands the agents run read the same configuration.
func startSubagents(t *testing.T, lists []string, opts ...harnessOption) *harness {
	t.Helper()
	fc := config.FileConfig{
		DefaultAgent: "exec", Grace: "2s", Concurrency: 32,
		Agents: map[string]string{"builder": "exec", "tester": "exec", "analyzer": "exec", "retriever": "exec"},
	}
	for _, o := range opts {
		o(&fc)
	}
	h := startDaemonWithCLI(t, lists, func(c *config.FileConfig) { *c = fc })
	t.Cleanup(func() {
		if t.Failed() && os.Getenv("TASKD_TEST_DUMP") != "" {
			h.dump(lists)
		}
	})
	return h
}

// dump logs every task file and event log of lists (TASKD_TEST_DUMP=1).
func (h *harness) dump(lists []string) {
	for _, l := range lists {
		files, _ := filepath.Glob(filepath.Join(h.listDir(l), "*.json"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			h.t.Logf("%s:\n%s", f, data)
		}
		data, _ := os.ReadFile(filepath.Join(h.listDir(l), ".taskd", "events.jsonl"))
		h.t.Logf("events of %s:\n%s", l, data)
	}
}

// q quotes s for a subagent prompt line ("…" with \", \\ and \n).
func q(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// resultJSON is an exec agent's final line: a result object.
func resultJSON(fields string) string {
	return `echo '{"success": true, ` + fields + `}'`
}

// parentTask is an exec task with a prompt, a cwd and extra metadata.taskd
// fields.
func parentTask(prompt, cwd string, extra map[string]any) string {
	td := map[string]any{"agent": "exec", "prompt": prompt, "cwd": cwd}
	for k, v := range extra {
		td[k] = v
	}
	b, _ := json.Marshal(map[string]any{"subject": "parent", "owner": "taskd", "metadata": map[string]any{"taskd": td}})
	return string(b)
}

// childNamed returns the id of parent's child called name, waiting for it.
func (h *harness) childNamed(list, parent, name string) string {
	h.t.Helper()
	var id string
	h.waitFor("child "+name+" of "+parent, 20*time.Second, func() bool {
		dir, err := taskfile.Open(h.listDir(list))
		if err != nil {
			return false
		}
		id, err = children.Named(dir, parent, name)
		return err == nil
	})
	return id
}

// waitEnded waits until task id has ended (any final state) and returns it.
func (h *harness) waitEnded(list, id string, timeout time.Duration) *taskfile.Task {
	h.t.Helper()
	var last *taskfile.Task
	h.waitFor("task "+id+" to end", timeout, func() bool {
		t, err := taskfile.ReadFile(filepath.Join(h.listDir(list), id+".json"))
		if err != nil {
			return false
		}
		last = t
		switch stateOf(t) {
		case task.Succeeded, task.Failed, task.Cancelled, task.TimedOut, task.NeedsHuman:
			return true
		}
		return false
	})
	return last
}

// wantEvent is one expected event: its type, task, and fields of its data
// (a nil value only requires the field to be present).
type wantEvent struct {
	typ, task string
	fields    map[string]any
}

// checkSequence checks that evs contain want in order (other events may
// come between) and returns the matched events.
func checkSequence(t *testing.T, evs []eventlog.Event, want []wantEvent) []eventlog.Event {
	t.Helper()
	var got []eventlog.Event
	i := 0
	for _, ev := range evs {
		if i < len(want) && matches(ev, want[i]) {
			got = append(got, ev)
			i++
		}
	}
	if i < len(want) {
		var b strings.Builder
		for _, ev := range evs {
			line, _ := json.Marshal(ev)
			b.Write(line)
			b.WriteByte('\n')
		}
		t.Fatalf("event %d of the sequence, %s of task %s with %v, not found after the others; events:\n%s",
			i, want[i].typ, want[i].task, want[i].fields, b.String())
	}
	return got
}

func matches(ev eventlog.Event, w wantEvent) bool {
	if ev.Type != w.typ || w.task != "" && ev.Task != w.task {
		return false
	}
	for k, v := range w.fields {
		got, ok := ev.Data[k]
		if !ok {
			return false
		}
		if v != nil && !reflect.DeepEqual(normal(got), normal(v)) {
			return false
		}
	}
	return true
}

// normal makes Go values comparable with decoded JSON.
func normal(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// readPid reads a pid file written by an agent.
func readPid(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	var pid int
	if _, err := fmt.Sscan(string(data), &pid); err != nil {
		t.Fatalf("pid file %s: %q", path, data)
	}
	return pid
}

// tdString returns metadata.taskd.key of t.
func tdString(t *taskfile.Task, key string) string {
	s, _ := t.Metadata.Object("taskd").String(key)
	return s
}

// mustJSON encodes v, task-file values (objects, numbers) included, in a
// canonical form.
func mustJSON(v any) []byte {
	if o, ok := v.(*taskfile.Object); ok {
		v = toPlain(o)
	}
	if arr, ok := v.([]any); ok {
		out := make([]any, len(arr))
		for i, e := range arr {
			if o, ok := e.(*taskfile.Object); ok {
				out[i] = toPlain(o)
			} else {
				out[i] = e
			}
		}
		v = out
	}
	b, _ := json.Marshal(v)
	return b
}

func toPlain(o *taskfile.Object) any {
	var out any
	json.Unmarshal(taskfile.AppendJSON(nil, o), &out)
	return out
}

// in returns h for use in subtest t (its failures end t, not the test
// that started the daemon).
func (h *harness) in(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}
