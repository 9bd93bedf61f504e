package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
)

// TestWorktree_ForkBranchesInherit: a workflow task with
// metadata.taskd.worktree and a repository as cwd forks two branches.
// The branch that says nothing inherits both: it runs in a git worktree of
// its own, on its branch taskd/<list>/<id>, where its work is committed
// when it reaches the join. The branch whose "taskd" in
// the workflow says otherwise (no worktree, another cwd) keeps its own
// settings and runs there.
func TestWorktree_ForkBranchesInherit(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	elsewhere, sync := t.TempDir(), t.TempDir()
	h := startDaemon(t, []string{"l"})
	record := func(name string) string {
		return `pwd > ` + sync + `/pwd-` + name + `; git rev-parse --abbrev-ref HEAD > ` + sync + `/branch-` + name + ` 2>&1; true`
	}
	h.addWorkflow("l", "split", `{"id": "split", "name": "split", "nodes": {
  "start": {"type": "start"},
  "fork": {"type": "fork", "name": "Split", "join": "join", "branches": {
     "inherits": {"entryStep": "a"},
     "own": {"entryStep": "b", "taskd": {"worktree": false, "cwd": "`+elsewhere+`"}}}},
  "a": {"type": "task", "name": "A", "command": "`+record("inherits")+`"},
  "b": {"type": "task", "name": "B", "command": "`+record("own")+`"},
  "join": {"type": "join", "name": "Join", "fork": "fork"},
  "end": {"type": "end", "result": "success"},
  "hitl": {"type": "end", "result": "blocked", "escalation": "hitl"}},
 "edges": [
  {"from": "start", "to": "fork"},
  {"from": "a", "to": "join"},
  {"from": "b", "to": "join"},
  {"from": "join", "to": "end", "on": "passed"},
  {"from": "join", "to": "hitl", "on": "failed"}]}`)
	h.drop("l", "1", flowTask("1", "split", "Split", `{"cwd": "`+repo+`", "worktree": true}`))
	h.waitState("l", "1", task.Succeeded, time.Minute)

	branches := map[string]string{} // branch name → task id
	ids, _ := mustDir(t, h.listDir("l")).List()
	for _, id := range ids {
		c := h.read("l", id)
		if p, _ := c.Metadata.String("parentTaskId"); p == "1" {
			name, _ := c.Metadata.String("branchName")
			branches[name] = id
			td := c.Metadata.Object("taskd")
			wt, _ := td.Bool("worktree")
			cwd, _ := td.String("cwd")
			ws, hasWS := job.WorkspaceOf(c)
			switch name {
			case "inherits":
				if !wt || cwd != repo || !hasWS || ws.Branch != "taskd/l/"+id {
					t.Errorf("the branch that says nothing: worktree %v, cwd %q, workspace %+v; want its parent's worktree and cwd, a worktree of its own", wt, cwd, ws)
				}
			case "own":
				if wt || cwd != elsewhere || hasWS {
					t.Errorf("the branch that says otherwise: worktree %v, cwd %q, workspace %+v; want its own settings", wt, cwd, ws)
				}
			}
		}
	}
	if len(branches) != 2 {
		t.Fatalf("branches %v, want inherits and own", branches)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(sync, name))
		if err != nil {
			t.Error(err)
		}
		return strings.TrimSpace(string(data))
	}
	id := branches["inherits"]
	if got, want := read("pwd-inherits"), job.Worktrees(h.cfg).Path("l", id); got != want {
		t.Errorf("the inheriting branch ran in %q, want its worktree %s", got, want)
	}
	if got := read("branch-inherits"); got != "taskd/l/"+id {
		t.Errorf("the inheriting branch ran on git branch %q, want taskd/l/%s", got, id)
	}
	if got := read("pwd-own"); got != elsewhere {
		t.Errorf("the branch that says otherwise ran in %q, want %s", got, elsewhere)
	}
	if got := read("branch-own"); !strings.Contains(got, "not a git repository") {
		t.Errorf("the branch that says otherwise saw git branch %q, want no repository", got)
	}
}
