// Package allowenv is the one allow-list of what taskd passes on from its
// own environment to the programs it starts: agents (to which their
// profile may add more) and taskd's own git commands. Nothing else of the
// daemon's environment — API keys, tokens, credentials it was started
// with — reaches them, nor anything they run in turn (a repository's hook,
// a filter, an agent's tool). docs/security.md describes the whole.
package allowenv

import (
	"os"
	"strings"
)

// Base are the variables every program taskd starts inherits from the
// daemon: who and where the user is, and how text is shown. A name ending
// in * is a prefix.
var Base = []string{"HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TZ", "TMPDIR", "TERM", "XDG_*"}

// Match reports whether the variable called name is one of patterns:
// names, or prefixes ending in *.
func Match(name string, patterns []string) bool {
	for _, p := range patterns {
		if p == name || strings.HasSuffix(p, "*") && strings.HasPrefix(name, p[:len(p)-1]) {
			return true
		}
	}
	return false
}

// Environ is this process's environment reduced to the variables that
// patterns allow, in its order.
func Environ(patterns []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if Match(name, patterns) {
			env = append(env, kv)
		}
	}
	return env
}
