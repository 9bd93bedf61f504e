package main

import "sync"

// The commands' former names, kept for one release (removed in the next):
// each works exactly as the command that replaces it. 'taskd help' lists
// them under their own heading; their manuals name the new command.
var aliases = []struct {
	old, replacedBy string
	when            func(args []string) bool // nil: the name is the alias's alone
	whenWords       string                   // when, in words, for the manual
}{
	{"push", "child push", nil, ""},
	{"run", "child start", inTask, "inside a task"},
	{"queue", "child list", nil, ""},
	{"inbox", "child inbox", nil, ""},
	{"check", "child check", nil, ""},
	{"receive", "child receive", nil, ""},
	{"send", "child send", nil, ""},
	{"kill", "child cancel", nil, ""},
	{"delegate", "child delegate", nil, ""},
	{"handoff", "child handoff", nil, ""},
	{"converge", "child converge", nil, ""},
	{"start", "retry", withArgs, "with task names"},
}

// withArgs reports whether there are arguments: 'taskd start' alone is
// the service, with task names the alias of retry.
func withArgs(args []string) bool { return len(args) > 0 }

var tableOnce sync.Once

// table returns every command: those the files registered, then the
// aliases of the ones that replace them.
func table() []*command {
	tableOnce.Do(func() {
		for _, a := range aliases {
			var c *command
			for _, r := range commands {
				if r.name == a.replacedBy {
					c = r
				}
			}
			if c == nil {
				panic("alias " + a.old + " of a command that does not exist: " + a.replacedBy)
			}
			commands = append(commands, alias(a.old, c, a.when, a.whenWords))
		}
	})
	return commands
}
