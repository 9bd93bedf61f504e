package task_test

import (
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestReadSpec_Queue: priorities are whole numbers within bounds (a huge
// or fractional one is refused, naming the field), notBefore is an RFC
// 3339 time, schedule a string and overlap a boolean.
func TestReadSpec_Queue(t *testing.T) {
	for _, tt := range []struct {
		taskd   string
		check   func(task.Spec) bool
		wantErr string
	}{
		{`{"priority": 5}`, func(s task.Spec) bool { return s.Priority == 5 }, ""},
		{`{"priority": -3}`, func(s task.Spec) bool { return s.Priority == -3 }, ""},
		{`{"priority": 1000000000}`, func(s task.Spec) bool { return s.Priority == task.MaxPriority }, ""},
		{`{"priority": 1000000001}`, nil, "between -1000000000 and 1000000000"},
		{`{"priority": 1e300}`, nil, "metadata.taskd.priority"},
		{`{"priority": 99999999999999999999999999}`, nil, "metadata.taskd.priority"},
		{`{"priority": 2.5}`, nil, "metadata.taskd.priority"},
		{`{"priority": "high"}`, nil, "want a whole number"},
		{`{"notBefore": "2031-03-03T02:00:00+01:00"}`, func(s task.Spec) bool {
			return s.NotBefore.Equal(time.Date(2031, 3, 3, 1, 0, 0, 0, time.UTC))
		}, ""},
		{`{"notBefore": "tomorrow"}`, nil, "an RFC 3339 time"},
		{`{"notBefore": 1234}`, nil, "an RFC 3339 time"},
		{`{"schedule": "0 2 * * *", "overlap": true}`, func(s task.Spec) bool { return s.Schedule == "0 2 * * *" && s.Overlap }, ""},
		{`{"schedule": ["0 2 * * *"]}`, nil, "want a string"},
		{`{"overlap": "yes"}`, nil, "true or false"},
	} {
		tf, err := taskfile.Parse([]byte(`{"subject": "s", "metadata": {"taskd": `+tt.taskd+`}}`), "t.json", "1")
		if err != nil {
			t.Fatalf("%s: %v", tt.taskd, err)
		}
		sp, err := task.ReadSpec(tf)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tt.taskd, err, tt.wantErr)
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.taskd, err)
		case tt.wantErr == "" && !tt.check(sp):
			t.Errorf("%s: read %+v", tt.taskd, sp)
		}
	}
}
