package main

import (
	"errors"
	"path/filepath"
)

// taskRoot returns the absolute task root, chosen as taskd run chooses it:
// the --root flag, else $TASKD_ROOT, else $CLAUDE_CONFIG_DIR/tasks, else
// ~/.claude/tasks. It fails only when it falls back to the home directory
// and $HOME is unset.
func taskRoot(flag string, getenv func(string) string) (string, error) {
	root := flag
	switch {
	case root != "":
	case getenv("TASKD_ROOT") != "":
		root = getenv("TASKD_ROOT")
	case getenv("CLAUDE_CONFIG_DIR") != "":
		root = filepath.Join(getenv("CLAUDE_CONFIG_DIR"), "tasks")
	case getenv("HOME") != "":
		root = filepath.Join(getenv("HOME"), ".claude", "tasks")
	default:
		return "", errors.New("no task root: give --root, or set TASKD_ROOT or HOME")
	}
	return filepath.Abs(root)
}
