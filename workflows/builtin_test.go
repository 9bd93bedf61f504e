package workflows_test

import (
	"encoding/json"
	"testing"

	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/workflows"
)

// TestBuiltin_Valid checks every embedded workflow: no problems at all, not
// even warnings, and the conventions the built-ins keep.
func TestBuiltin_Valid(t *testing.T) {
	defs := workflows.Builtin()
	ids := map[string]bool{}
	for _, d := range defs {
		ids[d.ID] = true
		for _, p := range d.Problems {
			t.Errorf("%s", p)
		}
		wf := d.Workflow
		if wf.ID != d.ID || wf.Name == "" || len(wf.Description) < 40 {
			t.Errorf("%s: id %q, name %q, description %q: want the file's id, a name and a real description", d.File, wf.ID, wf.Name, wf.Description)
		}
		if !json.Valid(d.Data) {
			t.Errorf("%s: not valid JSON", d.File)
		}
		for _, id := range wf.Nodes() {
			n := wf.Node(id)
			if n.IsWork() && n.Agent == "" && n.Command == "" {
				t.Errorf("%s: step %q has neither an agent nor a command", d.File, id)
			}
			if n.IsWork() && n.Command == "" && n.Instructions == "" {
				t.Errorf("%s: agent step %q has no instructions, so its prompt would be generic", d.File, id)
			}
			if n.Terminal() == navigator.TerminalHITL && len(wf.Outgoing(id)) == 0 {
				t.Errorf("%s: HITL end %q has no recovery edge", d.File, id)
			}
		}
	}
	for _, id := range []string{"feature-development", "bug-fix", "quick-task", "code-review", "refactor", "test-coverage",
		"parallel-checks", "implement-test-review", "command-check"} {
		if !ids[id] {
			t.Errorf("no built-in workflow %q", id)
		}
	}
}

// TestBuiltin_Kinds checks that the built-ins cover fork/join, command
// steps, and a workflow that runs without any agent.
func TestBuiltin_Kinds(t *testing.T) {
	set, _ := workflows.Load()
	has := func(id string, pred func(*navigator.Node) bool) bool {
		wf, _, ok := set.Lookup(id)
		if !ok {
			t.Fatalf("no workflow %q", id)
		}
		for _, n := range wf.Nodes() {
			if pred(wf.Node(n)) {
				return true
			}
		}
		return false
	}
	if !has("parallel-checks", func(n *navigator.Node) bool { return n.Type == navigator.TypeFork }) {
		t.Error("parallel-checks has no fork")
	}
	if !has("implement-test-review", func(n *navigator.Node) bool { return n.Command != "" && n.Type == navigator.TypeGate }) {
		t.Error("implement-test-review has no command gate")
	}
	if has("command-check", func(n *navigator.Node) bool { return n.Agent != "" }) {
		t.Error("command-check uses an agent")
	}
	if !has("command-check", func(n *navigator.Node) bool { return n.Command != "" && n.Type == navigator.TypeTask }) ||
		!has("command-check", func(n *navigator.Node) bool { return n.Command != "" && n.Type == navigator.TypeGate }) {
		t.Error("command-check lacks a command step or a command gate")
	}
}

// TestBuiltin_GatesEscalate walks every retry/escalate pair of the
// built-ins: failing the gate every time it is reached and passing
// everything else must reach the gate's escalation end after exactly
// maxRetries+1 failures. Flow keeps one retry counter per task and resets it
// on every conditional advance, so a gate whose retry loop passes another
// gate would retry forever; the built-ins are drawn so that none does.
func TestBuiltin_GatesEscalate(t *testing.T) {
	set, _ := workflows.Load()
	for _, d := range workflows.Builtin() {
		wf := d.Workflow
		for _, gate := range wf.Nodes() {
			escalation := escalationOf(wf, gate)
			if escalation == "" {
				continue
			}
			md := map[string]any{"workflowType": d.ID, "currentStep": gate, "retryCount": 0}
			failures, steps := 0, 0
			for ; steps < 200; steps++ {
				result := "passed"
				if md["currentStep"] == gate {
					result = "failed"
					failures++
				}
				resp, wt, err := navigator.Navigate(set, &navigator.Task{Stem: "1", ID: "1", HasID: true, Metadata: md}, navigator.Input{Result: result})
				if err != nil {
					t.Fatalf("%s: at %v: %v", d.ID, md["currentStep"], err)
				}
				for _, f := range wt.Metadata {
					md[f.Key] = f.Value
				}
				if resp.Terminal == navigator.TerminalHITL || resp.Terminal == navigator.TerminalSuccess {
					break
				}
			}
			if got, want := md["currentStep"], escalation; got != want {
				t.Errorf("%s: failing %q always ends at %v after %d steps, want its escalation %q", d.ID, gate, got, steps, want)
			}
			if got, want := failures, wf.Node(gate).MaxRetries+1; got != want {
				t.Errorf("%s: %q escalated after %d failures, want maxRetries+1 = %d", d.ID, gate, got, want)
			}
		}
	}
}

// escalationOf returns the end a retry/escalate pair of gate escalates to,
// or "" if gate has no such pair.
func escalationOf(wf *navigator.Workflow, gate string) string {
	var retry, escalate string
	for _, e := range wf.Outgoing(gate) {
		if e.On != "failed" {
			continue
		}
		if n := wf.Node(e.To); n != nil && n.Type == navigator.TypeEnd {
			if escalate == "" {
				escalate = e.To
			}
		} else if retry == "" {
			retry = e.To
		}
	}
	if retry == "" {
		return ""
	}
	return escalate
}
