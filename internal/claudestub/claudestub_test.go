package claudestub_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/internal/claudestub"
)

// run runs the real CLI in dir with prompt and the given flags, and
// returns its JSON result.
func run(t *testing.T, s *claudestub.Server, dir, prompt string, flags ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudestub.Binary(t), append([]string{"-p", "--output-format", "json"}, flags...)...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, s.Env(t)...)
	cmd.Stdin = strings.NewReader(prompt)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("claude printed no JSON: %v\n%s", err, out)
	}
	return res
}

func TestText(t *testing.T) {
	t.Parallel()
	s := claudestub.New(t, func(n int, body string) claudestub.Turn {
		return claudestub.Turn{Text: "hello from the stub"}
	})
	res := run(t, s, t.TempDir(), "say hello")
	if got, want := res["result"], "hello from the stub"; got != want {
		t.Errorf("result = %v, want %q", got, want)
	}
	if bodies := s.Bodies(); len(bodies) != 1 || !strings.Contains(bodies[0], "say hello") {
		t.Errorf("the stub was asked %d times: %.300v", len(bodies), bodies)
	}
}

// TestEdit: the CLI carries out an Edit the stub asks for, in a directory
// outside ~/.claude, with acceptEdits.
func TestEdit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "greet.txt")
	if err := os.WriteFile(file, []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := claudestub.New(t, func(n int, body string) claudestub.Turn {
		switch n {
		case 1:
			return claudestub.Read(file)
		case 2:
			return claudestub.Edit(file, "hello world", "hello, world")
		}
		return claudestub.Turn{Text: "edited"}
	})
	res := run(t, s, dir, "fix the comma", "--permission-mode", "acceptEdits")
	if got, _ := os.ReadFile(file); string(got) != "hello, world\n" {
		t.Errorf("file = %q, result %v", got, res)
	}
	if got := s.Replies(); got != 3 {
		t.Errorf("replies = %d, want 3", got)
	}
}
