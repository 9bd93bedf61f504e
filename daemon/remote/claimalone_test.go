package remote_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
)

// remoteState is the worker and state cmd.json of run folder
// list/.taskd/runs/id/n names ("" when it names none).
func (c *cluster) remoteState(list, id string, n int) (worker, state string) {
	data, _ := os.ReadFile(filepath.Join(c.listDir(list), ".taskd", "runs", id, itoa(n), "cmd.json"))
	var cmd struct {
		Remote struct {
			Worker string `json:"worker"`
			State  string `json:"state"`
		} `json:"remote"`
	}
	_ = json.Unmarshal(data, &cmd)
	return cmd.Remote.Worker, cmd.Remote.State
}

// holdingClone has the workers started next clone through a real git
// whose upload-pack holds the pack of every clone until the file release
// exists: the attempt of a task with metadata.taskd.repo is claimed, and
// its agent does not start while release is missing. It returns the
// file that appears when a clone is held, and release.
func (c *cluster) holdingClone() (held, release string) {
	c.t.Helper()
	marks := c.t.TempDir()
	held, release = filepath.Join(marks, "held"), filepath.Join(marks, "release")
	hook := filepath.Join(marks, "hold-pack.sh")
	script := "#!/bin/sh\n: > '" + held + "'\nwhile [ ! -e '" + release + "' ]; do sleep 0.05; done\nexec \"$@\"\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		c.t.Fatal(err)
	}
	// uploadpack.packObjectsHook is honoured only in protected
	// configuration: the global file of the workers' HOME.
	gitconfig := "[uploadpack]\n\tpackObjectsHook = " + hook + "\n"
	if err := os.WriteFile(filepath.Join(c.dir, "home", ".gitconfig"), []byte(gitconfig), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return held, release
}

// newRepo makes a git repository with one commit and returns its path.
func newRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"},
	} {
		gitRun(t, repo, args...)
	}
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "add", "README")
	gitRun(t, repo, "commit", "-q", "-m", "first")
	return repo
}

// touch creates an empty file.
func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Ensure a claim whose agent has not started a second later is written
// into the coordinator's cmd.json alone, in state claimed with its
// worker, then running once the agent starts; and that a coordinator
// killed while the worker prepares the agent, and started again, follows
// the attempt to its end, which runs once.
func TestRemote_ClaimWrittenAloneSurvivesCoordinatorKill(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	held, release := c.holdingClone()
	c.worker("w1", "--profiles", "exec")
	repo := newRepo(t)
	marks := t.TempDir()
	ran, goOn := filepath.Join(marks, "ran"), filepath.Join(marks, "go-on")
	script := "echo ran >> '" + ran + "'; while [ ! -e '" + goOn + "' ]; do sleep 0.05; done"
	c.drop("l", "1", execTask(script, t.TempDir(), map[string]any{"taskd.repo": "file://" + repo}))

	c.waitFor("the worker's clone to be held", 30*time.Second, func() bool {
		_, err := os.Stat(held)
		return err == nil
	})
	c.waitFor("cmd.json to name the claim of w1", 30*time.Second, func() bool {
		w, st := c.remoteState("l", "1", 1)
		return w == "w1" && st == "claimed"
	})
	if _, err := os.Stat(ran); err == nil {
		t.Fatalf("the agent ran while its clone was held\n%s", c.logs())
	}

	c.kill(c.coord)
	c.restart(c.coord)
	// The restarted coordinator reads the claim from cmd.json and keeps
	// it there: no second attempt is sent meanwhile.
	c.waitFor("the restarted coordinator to follow the attempt", 30*time.Second, func() bool {
		return strings.Contains(c.coord.out.String(), "following an attempt sent to a worker before the daemon restarted")
	})
	if w, st := c.remoteState("l", "1", 1); w != "w1" || st != "claimed" {
		t.Errorf("after the restart cmd.json names worker %q in state %q, want w1 claimed", w, st)
	}

	touch(t, release)
	c.waitFor("cmd.json to say the agent runs", 30*time.Second, func() bool {
		w, st := c.remoteState("l", "1", 1)
		return w == "w1" && st == "running"
	})
	touch(t, goOn)
	c.waitState("l", []string{"1"}, task.Succeeded, 60*time.Second)
	if data, _ := os.ReadFile(ran); string(data) != "ran\n" {
		t.Errorf("the agent ran %d times, want once\n%s", strings.Count(string(data), "ran"), c.logs())
	}
	if _, err := os.Stat(filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "2")); err == nil {
		t.Errorf("the task has a second attempt\n%s", c.logs())
	}
}
