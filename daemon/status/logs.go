package status

import (
	"encoding/json"
	"path/filepath"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/internal/fsroot"
)

// LogName is the log of the attempt in run folder runDir that taskd logs
// prints: standard error (stderr), else a streaming agent's readable
// transcript (unless raw), else standard output. cmd.json says whether
// the agent streams.
func LogName(runDir string, stderr, raw bool) string {
	if stderr {
		return "stderr.log"
	}
	var cmd struct {
		Output string `json:"output"`
	}
	if data, err := fsroot.ReadRegular(filepath.Join(runDir, "cmd.json")); err == nil && json.Unmarshal(data, &cmd) == nil &&
		agent.IsStream(cmd.Output) && !raw {
		return "transcript.log"
	}
	return "stdout.log"
}
