package daemon

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/taskd/taskd/daemon/config"
)

// This file exports, for taskd doctor, the rules the daemon applies to its
// setup, so that the checks and the daemon cannot disagree.

// CheckPrivate returns nil when path belongs to the daemon's user and can
// be written only by it, and otherwise an *fsroot.UnsafeError wrapping
// ErrInsecure that names the owner or the mode and the command that fixes
// it. It is the rule the daemon applies to the root and
// to every list unless --insecure. It fails like os.Stat when path cannot
// be examined.
func CheckPrivate(path string) error {
	return checkPrivate(path)
}

// CheckList returns nil when the daemon serves the list at path, and
// otherwise why not: an *fsroot.UnsafeError (wrapping ErrInsecure) when
// the list belongs to another user, other users can write to it (the
// daemon serves such a list with --insecure), or its .taskd area is, or
// holds, a symbolic link.
func CheckList(path string) error {
	return checkList(path, false)
}

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
