package taskfile_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

// surrogateTask is a task file as Claude Code writes one whose text holds
// lone surrogates (JavaScript strings may; JSON.stringify escapes them) next
// to a pair, which it writes as the character.
const surrogateTask = `{
  "id": "7",
  "subject": "Fix \ud800 in the parser 😀",
  "description": "Line one \udfff\nline two \udbff\udbff end",
  "activeForm": "Fixing",
  "status": "pending",
  "owner": "taskd",
  "blocks": [],
  "blockedBy": [],
  "metadata": {
    "note\udc00": "value \ud83d",
    "taskd": {
      "prompt": "echo hi"
    }
  }
}`

// TestDir_UpdateKeepsLoneSurrogates checks that a user's text survives a
// rewrite byte for byte, lone surrogates included: an Update that changes
// another field writes the file with only that field changed, and the result
// is exactly what JSON.stringify writes for the same value, so Claude Code
// would not change it either.
func TestDir_UpdateKeepsLoneSurrogates(t *testing.T) {
	d := mustOpen(t)
	writeRaw(t, d, "7.json", surrogateTask)
	task, err := d.Read("7")
	if err != nil {
		t.Fatal(err)
	}
	if task.Changed() {
		t.Errorf("an unchanged file would be rewritten as\n%s", task.Marshal())
	}
	if got, want := task.Subject, "Fix \xed\xa0\x80 in the parser 😀"; got != want {
		t.Errorf("Subject = %q, want %q", got, want)
	}
	if got, _ := task.Metadata.String("note\xed\xb0\x80"); got != "value \xed\xa0\xbd" {
		t.Errorf("metadata value = %q, want the lone surrogate kept", got)
	}

	if _, err := d.Update(context.Background(), "7", func(task *taskfile.Task) error {
		task.Status = taskfile.StatusInProgress
		task.Metadata.Object("taskd").Set("state", "running")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(d.File("7"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(surrogateTask, `"status": "pending"`, `"status": "in_progress"`, 1)
	want = strings.Replace(want, `"prompt": "echo hi"`, `"prompt": "echo hi",`+"\n"+`      "state": "running"`, 1)
	if got := string(data); got != want {
		t.Errorf("file after Update\n got %s\nwant %s", got, want)
	}

	node := nodeTools(t)
	cmd := exec.Command("node", filepath.Join(node, "stringify.js"))
	cmd.Stdin = strings.NewReader(string(data))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node stringify.js: %v", err)
	}
	if string(out) != string(data) {
		t.Errorf("JSON.stringify writes the file differently:\n got %s\nwant %s", data, out)
	}
}

// TestTask_DefaultSubjectKeepsLoneSurrogates checks that the subject taskd
// derives from a description counts a lone surrogate as one character and
// keeps it.
func TestTask_DefaultSubjectKeepsLoneSurrogates(t *testing.T) {
	tests := []struct {
		name, description, want string
	}{
		{"short", `\ud800 fix`, `\ud800 fix`},
		{"cut", strings.Repeat(`\udbff`, 100), strings.Repeat(`\udbff`, 79) + "…"},
		{"eighty", strings.Repeat(`é\udc00`, 40), strings.Repeat(`é\udc00`, 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, err := taskfile.Parse([]byte(`{"owner": "taskd", "description": "`+tt.description+`"}`), "5.json", "5")
			if err != nil {
				t.Fatal(err)
			}
			task.FillDefaults("5")
			if got, want := string(taskfile.MarshalIndent(task.Subject)), `"`+tt.want+`"`; got != want {
				t.Errorf("subject = %s, want %s", got, want)
			}
		})
	}
}
