package remote

import (
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/agent"
)

func TestToken(t *testing.T) {
	tests := []struct{ name, want string }{
		{"exec", "exec"},
		{"fast-claude_2", "fast-claude_2"},
		{"my.profile", "x6d792e70726f66696c65"},
		{"x1", "x7831"}, // a plain name that starts with x is encoded too: no clash with an encoded one
		{"a b", "x612062"},
	}
	for _, tt := range tests {
		if got := Token(tt.name); got != tt.want {
			t.Errorf("Token(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestOutcomeNames(t *testing.T) {
	for _, out := range []agent.Outcome{agent.Finished, agent.TimedOut, agent.Cancelled, agent.Interrupted, agent.NotStarted} {
		if got := OutcomeFrom(OutcomeName(out)); got != out {
			t.Errorf("OutcomeFrom(OutcomeName(%d)) = %d", out, got)
		}
	}
	if got := OutcomeFrom("what"); got != agent.Interrupted {
		t.Errorf("OutcomeFrom(unknown) = %d, want interrupted", got)
	}
}

func TestRunDirParts(t *testing.T) {
	tests := []struct {
		runDir string
		task   string
		n      int
		sub    string
	}{
		{"/r/l/.taskd/runs/7/3", "7", 3, ""},
		{"/r/l/.taskd/runs/a-b/12/judge", "a-b", 12, "judge"},
	}
	for _, tt := range tests {
		task, n, sub := runDirParts("/r/l", tt.runDir)
		if task != tt.task || n != tt.n || sub != tt.sub {
			t.Errorf("runDirParts(%q) = %q, %d, %q; want %q, %d, %q", tt.runDir, task, n, sub, tt.task, tt.n, tt.sub)
		}
	}
}

func TestAttemptOfSubject(t *testing.T) {
	if got := AttemptOfSubject("taskd", "taskd.run.abc.cancel"); got != "abc" {
		t.Errorf("AttemptOfSubject = %q", got)
	}
	if got := AttemptOfSubject("taskd", "other.run.abc.cancel"); got != "" {
		t.Errorf("AttemptOfSubject(other prefix) = %q", got)
	}
}

func TestWorkSubjectsAndConsumers(t *testing.T) {
	tests := []struct {
		profile           string
		labels            []string
		subject, consumer string
	}{
		{"claude", nil, "taskd.work.claude.-.ID", "work-claude"},
		{"claude", []string{"gpu"}, "taskd.work.claude.gpu.ID", "work-claude+gpu"},
		{"exec", []string{"gpu", "big", "gpu"}, "taskd.work.exec.big+gpu.ID", "work-exec+big+gpu"},
		{"my.profile", []string{"a-1"}, "taskd.work.x6d792e70726f66696c65.a-1.ID", "work-x6d792e70726f66696c65+a-1"},
	}
	for _, tt := range tests {
		if got := WorkSubject("taskd", tt.profile, tt.labels, "ID"); got != tt.subject {
			t.Errorf("WorkSubject(%q, %v) = %q, want %q", tt.profile, tt.labels, got, tt.subject)
		}
		if got := WorkConsumer(tt.profile, tt.labels); got != tt.consumer {
			t.Errorf("WorkConsumer(%q, %v) = %q, want %q", tt.profile, tt.labels, got, tt.consumer)
		}
		token, labels, ok := ParseWorkConsumer(tt.consumer)
		if !ok || token != Token(tt.profile) || LabelsToken(labels) != LabelsToken(tt.labels) {
			t.Errorf("ParseWorkConsumer(%q) = %q, %v, %v", tt.consumer, token, labels, ok)
		}
	}
	for _, name := range []string{"work-", "other", "work-claude+GPU", "work-a.b"} {
		if _, _, ok := ParseWorkConsumer(name); ok {
			t.Errorf("ParseWorkConsumer(%q) is ok", name)
		}
	}
}

func TestWorkCheck(t *testing.T) {
	good := func() Work {
		return Work{ID: "A1", List: "l", Task: "1", N: 1, Profile: "exec", Env: map[string]string{"TASKD_RESULTS": "x"}, Files: map[string][]byte{"transcript.json": nil}}
	}
	tests := []struct {
		name    string
		edit    func(*Work)
		subject string
		wantErr string
	}{
		{"good", func(*Work) {}, "taskd.work.exec.-.A1", ""},
		{"id not the subject's", func(*Work) {}, "taskd.work.exec.-.B2", "does not match"},
		{"id with a dot", func(w *Work) { w.ID = "A.1" }, "taskd.work.exec.-.A.1", "does not match"},
		{"a variable not taskd's", func(w *Work) { w.Env["LD_PRELOAD"] = "/tmp/x.so" }, "taskd.work.exec.-.A1", "none of taskd's"},
		{"a file outside the run folder", func(w *Work) { w.Files["../x"] = nil }, "taskd.work.exec.-.A1", `file "../x"`},
		{"a file named ..", func(w *Work) { w.Files[".."] = nil }, "taskd.work.exec.-.A1", `file ".."`},
		{"no task", func(w *Work) { w.Task = "" }, "taskd.work.exec.-.A1", "names no task"},
		{"a task that is a path", func(w *Work) { w.Task = "../../x" }, "taskd.work.exec.-.A1", "not a task id"},
		{"a sub-folder that is a path", func(w *Work) { w.Sub = "a/../../b" }, "taskd.work.exec.-.A1", "sub-folder"},
		{"a bad label", func(w *Work) { w.Labels = []string{"GPU"} }, "taskd.work.exec.-.A1", "label"},
	}
	for _, tt := range tests {
		w := good()
		tt.edit(&w)
		err := w.Check(tt.subject)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: Check = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}
