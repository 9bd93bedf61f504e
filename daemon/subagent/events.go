package subagent

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// event_type values of TranscriptEvent.
const (
	trSubagentStart  = "subagent_start" // a subagent was delegated
	trSubagentStop   = "subagent_stop"  // a subagent's attempt ended
	trSubagentRetry  = "subagent_retry" // a handoff runs its child again
	trConflictFound  = "conflict_detected"
	trConflictSolved = "conflict_resolved"
)

// Outcomes of a subagent, from its state.
func outcomeOfState(state task.State) string {
	switch state {
	case task.Succeeded:
		return "success"
	case task.TimedOut:
		return "timeout"
	case task.Cancelled:
		return "cancelled"
	case task.Failed, task.Stopped:
		return "failure"
	}
	return ""
}

// subagentFields are the fields every event about child c carries. The
// completion fields are set once c has ended.
func subagentFields(listDir string, c *taskfile.Task) map[string]any {
	m := c.Metadata.Object("taskd")
	parent, _ := m.String("parent")
	f := map[string]any{"subagent_id": c.ID, "session_id": parent, "parent_session_id": parent}
	if n, ok := m.String("name"); ok {
		f["subagent_name"] = n
	}
	if v, ok := m.String("agentType"); ok {
		f["agent_type"] = v
	}
	mode, _ := m.String("permissionMode")
	if mode == "" {
		mode = task.DefaultMode
	}
	f["permission_mode"] = mode
	if _, ok := m.Get("tools"); ok {
		f["tools"] = task.Strings(m, "tools")
	}
	if p, ok := m.String("prompt"); ok {
		f["task_description"] = agent.Truncate(p, 500)
	}
	if s, ok := m.String("spawnedAt"); ok {
		f["spawn_timestamp"] = s
	}
	state := task.Of(c)
	if !state.Ended() {
		return f
	}
	f["outcome"] = outcomeOfState(state)
	if at := task.RecordOf(c).FinishedAt; !at.IsZero() {
		f["completion_timestamp"] = task.Stamp(at)
	}
	res, found := childResult(listDir, c)
	if found {
		f["duration_ms"] = res.DurationMs
		if res.SessionID != "" {
			f["agent_session_id"] = res.SessionID
		}
		if res.ToolInvocations != nil {
			f["tool_invocation_count"] = *res.ToolInvocations
		}
	}
	f["artifact_paths"] = artifactPaths(listDir, c, res, found)
	return f
}

// childResult reads the result.json of c's last attempt.
func childResult(listDir string, c *taskfile.Task) (agent.Result, bool) {
	n := task.RecordOf(c).Attempt
	if n == 0 {
		return agent.Result{}, false
	}
	return agent.ReadResult(filepath.Join(listDir, area.RelRunDir(c.ID, int(n))))
}

// artifactPaths are a child's run folder files (relative to the list
// directory listDir) and the files its result says it changed (as it
// wrote them). Its stdout.log is one only if the agent wrote to it: a log
// is made at its first byte.
func artifactPaths(listDir string, c *taskfile.Task, res agent.Result, found bool) []string {
	out := []string{}
	if n := task.RecordOf(c).Attempt; n > 0 && found {
		dir := area.RelRunDir(c.ID, n)
		out = append(out, filepath.Join(dir, "result.json"))
		if fi, err := os.Lstat(filepath.Join(listDir, dir, "stdout.log")); err == nil && fi.Mode().IsRegular() {
			out = append(out, filepath.Join(dir, "stdout.log"))
		}
	}
	return append(out, resultFiles(res)...)
}

// A Mirror is a list's bookkeeping for mirroring: which children are handed
// off (monitor or transfer-control), to which parent. The loop updates it;
// job goroutines read it through the event log's tap. It is safe for
// concurrent use.
type Mirror struct {
	mu       sync.Mutex          // protects the maps
	monitors map[string]Link     // child id → the parent watching it
	byParent map[string][]string // parent id → its monitored children
}

// A Link is one handed-off child as the mirror sees it.
type Link struct {
	parent    string
	agentType string
	mode      string
}

// SetLinks replaces the children parent monitors.
func (a *Mirror) SetLinks(parent string, links map[string]Link) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.byParent[parent] {
		if m, ok := a.monitors[c]; ok && m.parent == parent {
			delete(a.monitors, c)
		}
	}
	delete(a.byParent, parent)
	for c, m := range links {
		a.monitors[c] = m
		a.byParent[parent] = append(a.byParent[parent], c)
	}
}

// Watching reports whether parent monitors any child.
func (a *Mirror) Watching(parent string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byParent[parent]) > 0
}

// mirror copies an event of a handed-off child into its parent's stream: a
// TranscriptEvent of the parent with the child's event type and data.
// Mirrored events are not mirrored again.
func (a *Mirror) mirror(log *eventlog.Log, ev eventlog.Event) {
	if ev.Task == "" || ev.Type == eventlog.TranscriptEvent && ev.Data["mirror_of"] != nil {
		return
	}
	a.mu.Lock()
	m, ok := a.monitors[ev.Task]
	a.mu.Unlock()
	if !ok {
		return
	}
	typ := ev.Type
	if t, ok := ev.Data["event_type"].(string); ok && ev.Type == eventlog.TranscriptEvent {
		typ = t // the child's own transcript event (subagent_stop, …)
	}
	data := map[string]any{"event_type": typ, "mirror_of": ev.Task, "subagent_id": ev.Task,
		"session_id": m.parent, "handoff_mode": m.mode}
	if m.agentType != "" {
		data["agent_type"] = m.agentType
	}
	if ev.Attempt > 0 {
		data["attempt"] = ev.Attempt
	}
	if len(ev.Data) > 0 {
		data["event"] = ev.Data
	}
	log.Append(eventlog.Event{TS: ev.TS, Type: eventlog.TranscriptEvent, List: ev.List, Task: m.parent, Data: data})
}

// cliMonitor finds, for an event a taskd command logs, the handoff that
// monitors its task: the task's parent holds an unresolved handoff record
// for it. The daemon knows its links from its entries; a command reads
// the two task files. Any failure to read means no mirror.
func cliMonitor(listDir string, ev eventlog.Event) (Link, bool) {
	if ev.Task == "" || ev.Type == eventlog.TranscriptEvent && ev.Data["mirror_of"] != nil {
		return Link{}, false
	}
	dir, err := taskfile.Open(listDir)
	if err != nil {
		return Link{}, false
	}
	c, err := dir.Read(ev.Task)
	if err != nil {
		return Link{}, false
	}
	parent, _ := c.Metadata.Object("taskd").String("parent")
	if parent == "" {
		return Link{}, false
	}
	p, err := dir.Read(parent)
	if err != nil {
		return Link{}, false
	}
	for _, r := range handoffsOf(p) {
		if r.Child == ev.Task && r.State != handoffResolved {
			return Link{parent: parent, mode: r.Mode, agentType: r.AgentType}, true
		}
	}
	return Link{}, false
}

// NewMirror returns an empty mirror installed on log: every event of a
// linked child that log appends is copied into its parent's stream.
func NewMirror(log *eventlog.Log) *Mirror {
	a := &Mirror{monitors: map[string]Link{}, byParent: map[string][]string{}}
	log.SetTap(func(ev eventlog.Event) { a.mirror(log, ev) })
	return a
}

// Links returns the children task t (of id) monitors through handoffs
// that are not resolved, by child id.
func Links(id string, t *taskfile.Task) map[string]Link {
	recs := handoffsOf(t)
	if len(recs) == 0 {
		return nil
	}
	links := map[string]Link{}
	for _, r := range recs {
		if r.State == handoffResolved {
			continue
		}
		links[r.Child] = Link{parent: id, mode: r.Mode, agentType: r.AgentType}
	}
	return links
}
