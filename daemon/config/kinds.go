package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// The configuration knows each kind of agent program (claude, codex,
// opencode, a shell command) by what a Kind says of it; the rest of a
// kind — its command line, the reading of its output, its sessions — is
// package agent's (agent.Kind), which registers every kind here. A kind is
// named nowhere else in this package.

// A Kind is what the configuration knows of one kind of agent program.
type Kind struct {
	// Name is the kind's name, a profile's "flags".
	Name string
	// Programs are the names of the commands (their base names) whose
	// profiles are of this kind unless "flags" says otherwise.
	Programs []string
	// Outputs are the output formats (a profile's "output") that are the
	// kind's own.
	Outputs []string
	// Model says the kind runs a model, whose answer is read and whose
	// usage limit pauses its tasks by default; else it is a program whose
	// exit status is its result.
	Model bool
	// Other marks the kind of every program no kind names: exactly one
	// kind is.
	Other bool
	// Profiles are the kind's built-in profiles, by name; the
	// configuration file can override each.
	Profiles map[string]ProfileSpec
}

// defaultAgent is the profile a task runs whose agent is unnamed, unless
// the configuration's "defaultAgent" names another.
const defaultAgent = "claude"

// genericOutputs are the output formats of no kind: read at the end, for
// the last result object in what the agent printed.
var genericOutputs = []string{"json", "text"}

// kinds holds the registered kinds by name.
var kinds = struct {
	sync.RWMutex
	byName map[string]Kind
}{byName: map[string]Kind{}}

// RegisterKind adds a kind. It panics when the kind has no name, or its
// name, a program, an output format or a built-in profile is another
// kind's, as registering a database driver twice does: it is a mistake
// of the program, made once when it starts.
func RegisterKind(k Kind) {
	kinds.Lock()
	defer kinds.Unlock()
	if k.Name == "" {
		panic("config: a kind without a name")
	}
	for _, o := range kinds.byName {
		clash := o.Name == k.Name || o.Other && k.Other
		for _, p := range k.Programs {
			clash = clash || slices.Contains(o.Programs, p)
		}
		for _, f := range k.Outputs {
			clash = clash || slices.Contains(o.Outputs, f) || slices.Contains(genericOutputs, f)
		}
		for name := range k.Profiles {
			_, taken := o.Profiles[name]
			clash = clash || taken
		}
		if clash {
			panic(fmt.Sprintf("config: kind %q clashes with kind %q", k.Name, o.Name))
		}
	}
	kinds.byName[k.Name] = k
}

// KindNamed returns the registered kind of that name.
func KindNamed(name string) (Kind, bool) {
	kinds.RLock()
	defer kinds.RUnlock()
	k, ok := kinds.byName[name]
	return k, ok
}

// Kinds returns the registered kinds, by name.
func Kinds() []Kind {
	kinds.RLock()
	defer kinds.RUnlock()
	out := slices.Collect(maps.Values(kinds.byName))
	slices.SortFunc(out, func(a, b Kind) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// BuiltinProfiles returns the names of the registered kinds' built-in
// profiles, sorted.
func BuiltinProfiles() []string {
	return slices.Sorted(maps.Keys(builtinProfiles()))
}

// builtinProfiles are the registered kinds' built-in profiles
// (docs/configuration.md).
func builtinProfiles() map[string]ProfileSpec {
	out := map[string]ProfileSpec{}
	for _, k := range Kinds() {
		maps.Copy(out, k.Profiles)
	}
	return out
}

// kindOfProgram is the kind of a profile that names none: the kind whose
// program it runs, else the kind of other programs.
func kindOfProgram(program string) string {
	other := ""
	for _, k := range Kinds() {
		if slices.Contains(k.Programs, program) {
			return k.Name
		}
		if k.Other {
			other = k.Name
		}
	}
	return other
}

// outputNames lists the output formats a profile may name.
func outputNames() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.Outputs...)
	}
	return append(out, genericOutputs...)
}

// kindNames lists the kinds' names.
func kindNames() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.Name)
	}
	return out
}

// oneOf lists names as a message wants them: "a", "b" or "c".
func oneOf(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
