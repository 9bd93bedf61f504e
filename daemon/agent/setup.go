package agent

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/taskd/taskd/daemon/config"
)

// AgentPath returns the PATH an agent sees when the daemon runs with
// daemonPath as its own PATH and exe as its binary: the directory of exe
// first (so agents find taskd), then daemonPath. An empty exe adds nothing.
func AgentPath(exe, daemonPath string) string {
	if exe == "" {
		return daemonPath
	}
	return filepath.Dir(exe) + string(os.PathListSeparator) + daemonPath
}

// ProgramPath returns the program profile p runs (the first word of its
// command), found as the daemon finds it when it starts an agent: a name
// with a slash must exist, any other name must be an executable file in a
// directory of agentPath (see AgentPath). It fails with the message a task
// would fail with.
func ProgramPath(p *config.Profile, agentPath string) (string, error) {
	if p == nil || len(p.Command) == 0 {
		return "", errors.New("the profile has no command")
	}
	return lookPath(p.Command[0], []string{"PATH=" + agentPath})
}
