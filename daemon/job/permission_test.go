package job

import (
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestAskAboutDenials: the question about refused calls offers allow with
// exactly their rules when every call has one, allow-tool with their whole
// tools always, and names the session a grant continues; a call no rule
// allows alone leaves only allow-tool.
func TestAskAboutDenials(t *testing.T) {
	bash := agent.Denial{Tool: "Bash", Target: "python3 test_calc.py", Rule: "Bash(python3 test_calc.py)"}
	edit := agent.Denial{Tool: "Edit", Target: "/p/calc.py", Rule: "Edit(//p/calc.py)"}
	wild := agent.Denial{Tool: "Bash", Target: "rm *.tmp"}
	tests := []struct {
		name        string
		denials     []agent.Denial
		session     string
		wantOptions []string
		wantGrant   []string
		wantDenied  []string
		wantReason  []string
	}{
		{"one call", []agent.Denial{bash}, "s1",
			[]string{"allow", "allow-tool", "retry", "fail", "leave"}, []string{"Bash(python3 test_calc.py)"}, []string{"Bash"},
			[]string{"allow to allow exactly Bash(python3 test_calc.py)", "allow-tool to allow all of Bash", "continue its session"}},
		{"two tools, the same call twice", []agent.Denial{bash, edit, bash}, "s1",
			[]string{"allow", "allow-tool", "retry", "fail", "leave"}, []string{"Bash(python3 test_calc.py)", "Edit(//p/calc.py)"}, []string{"Bash", "Edit"},
			[]string{"exactly Bash(python3 test_calc.py), Edit(//p/calc.py)", "all of Bash, Edit"}},
		{"a call without a rule", []agent.Denial{bash, wild}, "s1",
			[]string{"allow-tool", "retry", "fail", "leave"}, nil, []string{"Bash"},
			[]string{"No rule allows exactly Bash (rm *.tmp)", "allow-tool to allow all of Bash"}},
		{"no session", []agent.Denial{bash}, "",
			[]string{"allow", "allow-tool", "retry", "fail", "leave"}, []string{"Bash(python3 test_calc.py)"}, []string{"Bash"},
			[]string{"it runs again"}},
	}
	for _, tt := range tests {
		var rec task.Record
		askAboutDenials(&rec, agent.Result{Denials: tt.denials, SessionID: tt.session}, "/logs")
		h := rec.Hold
		if got := task.Strings(h, "options"); !slices.Equal(got, tt.wantOptions) {
			t.Errorf("%s: options %v, want %v", tt.name, got, tt.wantOptions)
		}
		if got := task.Strings(h, "grant"); !slices.Equal(got, tt.wantGrant) {
			t.Errorf("%s: grant %v, want %v", tt.name, got, tt.wantGrant)
		}
		if got := task.Strings(h, "denied"); !slices.Equal(got, tt.wantDenied) {
			t.Errorf("%s: denied %v, want %v", tt.name, got, tt.wantDenied)
		}
		if got, _ := h.String("session"); got != tt.session {
			t.Errorf("%s: session %q, want %q", tt.name, got, tt.session)
		}
		reason, _ := h.String("reason")
		for _, want := range tt.wantReason {
			if !strings.Contains(reason, want) {
				t.Errorf("%s: reason %q lacks %q", tt.name, reason, want)
			}
		}
	}
}

// TestGrant: a grant is read back with its session and rules, and the
// continued session is told exactly what it may do now.
func TestGrant(t *testing.T) {
	tk := &taskfile.Task{ID: "1"}
	g := taskfile.NewObject()
	g.Set("session", "s1")
	g.Set("tools", []string{"Bash(python3 test_calc.py)"})
	task.Meta(tk).Set("grant", g)
	got, ok := GrantOf(tk)
	if !ok || got.Session != "s1" || !slices.Equal(got.Tools, []string{"Bash(python3 test_calc.py)"}) {
		t.Fatalf("GrantOf = %+v, %v", got, ok)
	}
	if p := got.Prompt(); !strings.Contains(p, "allowed the tool calls you were refused: Bash(python3 test_calc.py).") || !strings.Contains(p, "do not redo work") {
		t.Errorf("prompt %q", p)
	}
	if _, ok := GrantOf(&taskfile.Task{ID: "2"}); ok {
		t.Errorf("a task without a grant has one")
	}
}
