package daemon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestOutput_Capped: an agent that writes 1.5 GB to stdout (and 300 MB to
// stderr) as fast as it can, and a streaming agent whose transcript grows
// past the cap, leave small run folders: each log keeps its first and its
// last MiB (outputMaxMiB 2) with lines saying what was cut. The agents
// are neither blocked nor killed by the cap (they succeed; the streaming
// agent's result comes from its last line, past the cut), the results
// record what was cut, and taskd status and taskd logs show it.
func TestOutput_Capped(t *testing.T) {
	// Not parallel: 1.8 GB through the daemon's pipes is measured alone,
	// not against the package's other daemons.
	root := newRoot(t, "l")
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	const text = `{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"a line of talk, said again and again"}],"usage":{"input_tokens":10,"output_tokens":1}},"session_id":"s-1"}`
	const result = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"{\"success\": true, \"summary\": \"talked a lot\"}","session_id":"s-1","total_cost_usd":0.01}`
	data, _ := json.Marshal(config.FileConfig{OutputMaxMiB: 2, Profiles: map[string]config.ProfileSpec{
		"talker": {Command: []string{"sh", "-c"}, Prompt: "arg", Output: "claude-stream", Flags: "none"},
	}})
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := taskdBinary(t)
	h := &procHarness{harness: &harness{t: t, root: root, logs: &syncBuffer{}}}
	h.p = startDaemonProc(t, root, 2, "TASKD_TEST_CONFIG="+cfgPath)
	h.logs = h.p.log
	h.drop("l", "1", execTask("writes 1.5 GB", `yes | head -c 1500000000; echo END-OF-STDOUT; yes e | head -c 300000000 >&2; echo END-OF-STDERR >&2`))
	talk, _ := json.Marshal(map[string]any{"subject": "talks", "owner": "taskd", "metadata": map[string]any{"taskd": map[string]any{
		"agent": "talker", "prompt": "yes '" + text + "' | head -n 200000; echo '" + result + "'"}}})
	h.drop("l", "2", string(talk))
	for _, id := range []string{"1", "2"} {
		if tf := waitEnded(h.harness, "l", id, 10*time.Minute); task.Of(tf) != task.Succeeded {
			t.Fatalf("task %s is %s: %s", id, task.Of(tf), tdString(tf, "error"))
		}
	}
	runs := filepath.Join(root, "l", ".taskd", "runs")
	const limit, slack = 2 << 20, 1 << 10
	for _, c := range []struct {
		id, log, end string
	}{
		{"1", "stdout.log", "END-OF-STDOUT\n"},
		{"1", "stderr.log", "END-OF-STDERR\n"},
		{"2", "stdout.log", result + "\n"},
		{"2", "transcript.log", "talked a lot"},
	} {
		path := filepath.Join(runs, c.id, "1", c.log)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > limit+slack || fi.Size() < limit {
			t.Errorf("%s of task %s has %d bytes, want its cap of %d and a few lines", c.log, c.id, fi.Size(), limit)
		}
		got := readString(filepath.Dir(path), c.log)
		if !strings.Contains(got[len(got)-4096:], c.end) {
			t.Errorf("%s of task %s does not end with what the agent wrote last (%q): …%q", c.log, c.id, c.end, got[len(got)-200:])
		}
		if !strings.Contains(got, "held back") || !strings.Contains(got, "of output cut here") {
			t.Errorf("%s of task %s does not say what was cut", c.log, c.id)
		}
		if _, err := os.Stat(path + ".tail"); !os.IsNotExist(err) {
			t.Errorf("the ring of %s of task %s is left: %v", c.log, c.id, err)
		}
	}
	for _, id := range []string{"1", "2"} {
		var size int64
		filepath.Walk(filepath.Join(runs, id), func(_ string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				size += fi.Size()
			}
			return nil
		})
		if size > 3*(limit+slack)+64<<10 {
			t.Errorf("task %s's run folder holds %d bytes", id, size)
		}
	}
	var res struct {
		Success   bool             `json:"success"`
		Summary   string           `json:"summary"`
		OutputCut map[string]int64 `json:"outputCut"`
	}
	if err := json.Unmarshal([]byte(readString(filepath.Join(runs, "1", "1"), "result.json")), &res); err != nil {
		t.Fatal(err)
	}
	if want := int64(1500000000 + len("END-OF-STDOUT\n") - limit); !res.Success || res.OutputCut["stdout.log"] != want || res.OutputCut["stderr.log"] != 300000000+int64(len("END-OF-STDERR\n"))-limit {
		t.Errorf("task 1's result: success %v, cut %v; want stdout.log %d", res.Success, res.OutputCut, want)
	}
	json.Unmarshal([]byte(readString(filepath.Join(runs, "2", "1"), "result.json")), &res)
	if res.Summary != "talked a lot" || res.OutputCut["stdout.log"] == 0 || res.OutputCut["transcript.log"] == 0 {
		t.Errorf("task 2's result: summary %q, cut %v", res.Summary, res.OutputCut)
	}
	tf := h.read("l", "1")
	if cut, _ := tf.Metadata.Object("taskd").Object("result").Object("outputCut").Int("stdout.log"); cut == 0 {
		t.Errorf("the task file does not record what was cut: %v", tf.Metadata.Object("taskd").Object("result"))
	}
	out, err := exec.Command(bin, "status", "--root", root, "--color", "never", "l/1").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "output cut: stderr.log 284 MiB, stdout.log 1.4 GiB") {
		t.Errorf("taskd status l/1 (%v):\n%s", err, out)
	}
	out, err = exec.Command(bin, "logs", "--root", root, "l/1").Output()
	if err != nil || !strings.Contains(string(out), "of output cut here") || !strings.HasSuffix(string(out), "END-OF-STDOUT\n") {
		t.Errorf("taskd logs l/1 (%v): %d bytes, …%q", err, len(out), out[max(len(out)-300, 0):])
	}
	h.stopProc()
}

// waitEnded waits until task id of list has ended, and returns it.
func waitEnded(h *harness, list, id string, timeout time.Duration) *taskfile.Task {
	h.t.Helper()
	var tf *taskfile.Task
	h.waitFor("task "+list+"/"+id+" to end", timeout, func() bool {
		tf, _ = taskfile.ReadFile(filepath.Join(h.listDir(list), id+".json"))
		return tf != nil && task.Of(tf).Ended()
	})
	return tf
}
