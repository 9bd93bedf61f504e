package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkCLINavigate measures `taskd navigate` as a script calls it: a
// fresh process that loads the workflows, reads the task file and, for an
// advance, writes it back durably under the task's locks. The binary is
// built once; the median of the runs is reported as ms/median. "startup"
// runs `taskd version`, the cost of starting the process at all, as the
// baseline the other two compare with.
func BenchmarkCLINavigate(b *testing.B) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skip("go not on PATH: cannot build the binary")
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "taskd")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	wfDir := filepath.Join(dir, "workflows")
	os.MkdirAll(wfDir, 0o755)
	os.WriteFile(filepath.Join(wfDir, "loop.json"), []byte(`{"nodes": {"start": {"type": "start"},
	  "a": {"type": "task", "name": "A", "agent": "Developer"}, "b": {"type": "task", "name": "B", "agent": "Reviewer"}},
	  "edges": [{"from": "start", "to": "a"}, {"from": "a", "to": "b"}, {"from": "b", "to": "a"}]}`), 0o644)
	list := filepath.Join(dir, "list")
	os.MkdirAll(list, 0o755)
	task := filepath.Join(list, "1.json")
	os.WriteFile(task, []byte(`{"id": "1", "subject": "Loop", "status": "in_progress", "blocks": [], "blockedBy": [],
	  "metadata": {"workflowType": "loop", "currentStep": "a", "retryCount": 0, "userDescription": "Loop"}}`), 0o644)
	env := append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))

	for _, bc := range []struct {
		name string
		args []string
	}{
		{"startup", nil},
		{"advance", []string{"--result", "passed"}},
		{"current", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				args := append([]string{"navigate", "--task", task, "--workflows", wfDir}, bc.args...)
				if bc.name == "startup" {
					args = []string{"version"}
				}
				cmd := exec.Command(bin, args...)
				cmd.Env = env
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms/median")
		})
	}
}
