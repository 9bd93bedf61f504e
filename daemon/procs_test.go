package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestProcs_WorktreesUnderSubreaper: fifty tasks at once, each in a git
// worktree of its own on one repository, each leaving orphans that come
// back to the daemon (its child subreaper) and a notification command run
// for each end. Every git command the daemon runs, and every notification
// command, gets its own exit status: none is taken by the reaper of
// orphans ("waitid: no child processes"), so every task succeeds, every
// notification is made, and the log has no failure.
func TestProcs_WorktreesUnderSubreaper(t *testing.T) {
	t.Parallel()
	const n = 50
	repo := gitRepo(t)
	root := newRoot(t, "l")
	marks := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	data, _ := json.Marshal(config.FileConfig{Notify: &config.NotifySpec{
		Command:   []string{"sh", "-c", `(sleep 0.01 &) ; echo "$TASKD_TASK_ID" >> ` + marks + `/notified`},
		Succeeded: true,
	}})
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	taskdBinary(t)
	h := &procHarness{harness: &harness{t: t, root: root, logs: &syncBuffer{}}}
	h.p = startDaemonProc(t, root, n, "TASKD_TEST_CONFIG="+cfgPath)
	h.logs = h.p.log
	// Each agent leaves orphans that exit while the daemon's git commands
	// run: the reaper has work all along.
	script := `for i in 1 2 3 4 5; do (sleep 0.0$i &); done; git rev-parse --abbrev-ref HEAD > ` + marks + `/branch-$TASKD_TASK_ID`
	for i := 1; i <= n; i++ {
		h.drop("l", fmt.Sprint(i), execTask(fmt.Sprint("worktree ", i), script, "taskd.cwd", `"`+repo+`"`, "taskd.worktree", "true"))
	}
	for i := 1; i <= n; i++ {
		var tf *taskfile.Task
		h.waitFor(fmt.Sprint("task ", i, " to end"), 3*time.Minute, func() bool {
			tf, _ = taskfile.ReadFile(filepath.Join(h.listDir("l"), fmt.Sprint(i, ".json")))
			return tf != nil && task.Of(tf).Ended()
		})
		if s := task.Of(tf); s != task.Succeeded {
			t.Errorf("task %d is %s: %s", i, s, tdString(tf, "error"))
			continue
		}
		if b := readString(marks, fmt.Sprint("branch-", i)); !strings.HasPrefix(b, "taskd/") {
			t.Errorf("task %d ran on branch %q, want its own", i, b)
		}
	}
	h.waitFor("every end to be notified", time.Minute, func() bool {
		return strings.Count(readString(marks, "notified"), "\n") >= n
	})
	h.stopProc()
	log := h.p.log.String()
	for _, bad := range []string{"no child processes", "notification command failed"} {
		if strings.Contains(log, bad) {
			t.Errorf("the daemon's log says %q:\n%s", bad, log)
		}
	}
}
