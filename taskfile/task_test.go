package taskfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

func TestParse_BadFields(t *testing.T) {
	tests := []struct {
		name, in string
		kind     error
		want     string // the problem, after "NAME: "
	}{
		{"not json", `{"subject": }`, taskfile.ErrInvalidJSON, `invalid JSON: line 1, column 13: unexpected '}', expected a value`},
		{"array", `[1]`, taskfile.ErrNotObject, `the file holds an array, not a JSON object`},
		{"null", `null`, taskfile.ErrNotObject, `the file holds null, not a JSON object`},
		{"numeric id", `{"id": 7}`, taskfile.ErrWrongType, `field "id" is a number, want a string`},
		{"subject object", `{"subject": {}}`, taskfile.ErrWrongType, `field "subject" is an object, want a string`},
		{"status unknown", `{"status": "done"}`, taskfile.ErrWrongType, `field "status" is "done", want "pending", "in_progress" or "completed"`},
		{"status null", `{"status": null}`, taskfile.ErrWrongType, `field "status" is null, want a string`},
		{"blockedBy string", `{"blockedBy": "3"}`, taskfile.ErrWrongType, `field "blockedBy" is a string, want an array of strings`},
		{"blocks numbers", `{"blocks": ["1", 2]}`, taskfile.ErrWrongType, `element 1 of "blocks" is a number, want a string`},
		{"metadata array", `{"metadata": []}`, taskfile.ErrWrongType, `field "metadata" is an array, want an object`},
		{"owner bool", `{"owner": true}`, taskfile.ErrWrongType, `field "owner" is a boolean, want a string`},
		{"id mismatch", `{"id": "8"}`, taskfile.ErrIDMismatch, `the id "8" does not match the file name 7.json`},
		{"too large", `{"x": "` + strings.Repeat("a", taskfile.MaxSize) + `"}`, taskfile.ErrTooLarge, `the file is 1048585 bytes, larger than the 1 MiB limit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := taskfile.Parse([]byte(tt.in), "7.json", "7")
			var bad *taskfile.BadFileError
			if !errors.As(err, &bad) {
				t.Fatalf("Parse error = %v, want a *BadFileError", err)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("Parse error kind = %v, want %v", bad.Err, tt.kind)
			}
			if got, want := err.Error(), "7.json: "+tt.want; got != want {
				t.Errorf("Parse error\n got %s\nwant %s", got, want)
			}
			if bad.Fix == "" {
				t.Errorf("Parse error has no fix")
			}
		})
	}
}

func TestParse_Fields(t *testing.T) {
	in := `{"id": "7", "subject": "S", "description": "D", "activeForm": "A", "status": "in_progress", "owner": "taskd", "blocks": ["9"], "blockedBy": ["3", "4"], "metadata": {"k": 1}}`
	task, err := taskfile.Parse([]byte(in), "7.json", "7")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{task.ID, task.Subject, task.Description, task.ActiveForm, task.Status, task.Owner, strings.Join(task.Blocks, ","), strings.Join(task.BlockedBy, ",")}
	want := []string{"7", "S", "D", "A", "in_progress", "taskd", "9", "3,4"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("fields = %q, want %q", got, want)
	}
	if n, _ := task.Metadata.Int("k"); n != 1 {
		t.Errorf("metadata.k = %d, want 1", n)
	}
}

func TestTask_MarshalUnchangedIsIdentical(t *testing.T) {
	in := "{\n  \"id\": \"7\",\n  \"zeta\": [\n    1\n  ],\n  \"subject\": \"S\",\n  \"status\": \"pending\",\n  \"blocks\": [],\n  \"blockedBy\": [],\n  \"owner\": \"\"\n}"
	task, err := taskfile.Parse([]byte(in), "7.json", "7")
	if err != nil {
		t.Fatal(err)
	}
	// description and activeForm are absent: Claude Code's schema requires
	// the first, and the second keeps the task visible, so Marshal adds them.
	if !task.Changed() {
		t.Fatalf("Changed() = false for a file without description")
	}
	got := string(task.Marshal())
	want := "{\n  \"id\": \"7\",\n  \"zeta\": [\n    1\n  ],\n  \"subject\": \"S\",\n  \"status\": \"pending\",\n  \"blocks\": [],\n  \"blockedBy\": [],\n  \"owner\": \"\",\n  \"description\": \"\",\n  \"activeForm\": \"\"\n}"
	if got != want {
		t.Errorf("Marshal\n got %s\nwant %s", got, want)
	}
	again, err := taskfile.Parse([]byte(got), "7.json", "7")
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed() {
		t.Errorf("a marshalled task is not stable:\n%s", again.Marshal())
	}
}

func TestTask_FillDefaults(t *testing.T) {
	task, err := taskfile.Parse([]byte(`{"owner": "taskd", "metadata": {"taskd": {"prompt": "echo hi\nmore"}}}`), "12.json", "12")
	if err != nil {
		t.Fatal(err)
	}
	if !task.FillDefaults("12") {
		t.Fatal("FillDefaults reported no change")
	}
	got := string(task.Marshal())
	want := `{
  "owner": "taskd",
  "metadata": {
    "taskd": {
      "prompt": "echo hi\nmore"
    }
  },
  "id": "12",
  "subject": "echo hi",
  "description": "",
  "activeForm": "echo hi",
  "status": "pending",
  "blocks": [],
  "blockedBy": []
}`
	if got != want {
		t.Errorf("filled task\n got %s\nwant %s", got, want)
	}
}
