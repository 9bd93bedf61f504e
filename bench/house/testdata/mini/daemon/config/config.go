// Package config holds the table of agent kinds.
package config

// A Profile says how to run an agent.
type Profile struct {
	Name, Flags, Output string
}

// builtin is the table of kinds: not counted.
var builtin = map[string]Profile{
	"claude": {Flags: "claude", Output: "claude-stream"},
	"exec":   {Flags: "none", Output: "text"},
}

// Check checks a profile's flags.
func Check(p Profile) bool {
	switch p.Flags {
	case "claude", "codex": // want kind
		return true
	case "none":
		return true
	}
	return "exec" == "exec" && len(builtin) > 0
}

// Resolve takes six parameters.
func Resolve(a, b string, c int, d, e bool, f float64) string { // want wide
	return a
}

// Five takes five.
func Five(a, b, c, d, e int) int { return a }
