package children

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/taskfile"
)

// TestPush_SameNameAgain: a child pushed again under its name with the
// same prompt (an agent run again after a crash) is the same child; under
// its name with another prompt, the push is refused. Either way the
// parent keeps one child of that name.
func TestPush_SameNameAgain(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	list := filepath.Join(root, "l")
	if err := os.Mkdir(list, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.NewConfig(root, nil, &config.FileConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir = t.TempDir()
	dir, err := taskfile.Open(list)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	parent, err := dir.Create(ctx, &taskfile.Task{Subject: "parent", Owner: "taskd"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := Push(ctx, cfg, dir, parent.ID, PushOptions{Name: "a", Prompt: "echo a"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Push(ctx, cfg, dir, parent.ID, PushOptions{Name: "a", Prompt: "echo a"})
	if err != nil || again.ID != first.ID {
		t.Errorf("pushed again with the same prompt: %v, %v; want child %s", again, err, first.ID)
	}
	if _, err := Push(ctx, cfg, dir, parent.ID, PushOptions{Name: "a", Prompt: "echo b"}); err == nil || !strings.Contains(err.Error(), `already has a child named "a"`) {
		t.Errorf("pushed under a taken name with another prompt: %v, want refused", err)
	}
	p, err := dir.Read(parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if names := Names(dir, p); len(names) != 1 || names[0] != "a" {
		t.Errorf("the parent's children: %v, want one, a", names)
	}
	ids, _ := dir.List()
	if len(ids) != 2 {
		t.Errorf("%d task files, want the parent and one child: %v", len(ids), ids)
	}
}
