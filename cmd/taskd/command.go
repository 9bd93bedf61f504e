package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// flagSet is the flag set commands parse their arguments with.
type flagSet = flag.FlagSet

// A command is one taskd subcommand. The table of commands is the single
// source of `taskd help`, `taskd help CMD` and the manual in doc.go (a test
// keeps doc.go in step with it).
type command struct {
	name  string // as typed: "status", or "child push" for a command of a group
	usage string // arguments, after "taskd NAME "
	short string // one line for the command list
	long  string // the manual section: what it does, flags, examples
	group string // heading in the command list
	run   func(ctx context.Context, inv *invocation) error
	// replacedBy is set on an alias: the name of the command that replaces
	// it ("child push"). An alias works exactly as that command and is
	// removed in the next release.
	replacedBy string
	// when, on an alias that shares its name with another command (run,
	// start), says whether these arguments call the alias.
	when func(args []string) bool
}

// invocation carries one command's arguments and output streams.
type invocation struct {
	cmd            *command
	args           []string
	stdout, stderr io.Writer
}

// flags returns a FlagSet for the command that reports errors on stderr
// together with the command's usage line.
func (inv *invocation) flags() *flag.FlagSet {
	fs := flag.NewFlagSet(inv.cmd.name, flag.ContinueOnError)
	fs.SetOutput(inv.stderr)
	fs.Usage = func() {
		fmt.Fprintf(inv.stderr, "usage: taskd %s %s\nRun 'taskd help %s' for details.\n", inv.cmd.name, inv.cmd.usage, inv.cmd.name)
	}
	return fs
}

// parse parses the command's flags, mapping flag errors to errUsage (the
// FlagSet has already printed them). Flags may come before, between and
// after the arguments (taskd submit 'fix it' --worktree): every argument
// that begins with "-" is a flag, and one the command does not know is an
// error, never a word of an argument. A "--" ends the flags: what follows
// it are arguments, also those that begin with "-" (taskd submit --
// '-v prints nothing'). fs.Args() is then the arguments, in order.
func (inv *invocation) parse(fs *flag.FlagSet) error {
	flags, args := splitFlags(fs, inv.args)
	if err := fs.Parse(append(append(flags, "--"), args...)); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return errUsage
	}
	return nil
}

// splitFlags separates args into the flags of fs (each with its value, when
// the flag takes one and it is the next argument) and the other arguments,
// which end at "--" and after which everything is an argument. A lone "-"
// (standard input) is an argument.
func splitFlags(fs *flag.FlagSet, args []string) (flags, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flags, append(rest, args[i+1:]...)
		case len(a) < 2 || a[0] != '-':
			rest = append(rest, a)
		default:
			flags = append(flags, a)
			name, _, inline := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
			if !inline && takesValue(fs, name) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	return flags, rest
}

// takesValue reports whether flag name of fs takes a value from the next
// argument: it is defined and not a boolean flag.
func takesValue(fs *flag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// usageErrorf prints a usage problem and returns errUsage.
func (inv *invocation) usageErrorf(format string, args ...any) error {
	fmt.Fprintf(inv.stderr, "taskd %s: %s\nusage: taskd %s %s\n", inv.cmd.name, fmt.Sprintf(format, args...), inv.cmd.name, inv.cmd.usage)
	return errUsage
}

var commands []*command

// register adds commands to the table; each file that implements commands
// registers them from an init function.
func register(cmds ...*command) {
	commands = append(commands, cmds...)
}

// childPrefix names the group of commands an agent uses on its own task:
// taskd child push, taskd child start, ….
const childPrefix = "child"

// Headings of the command list.
const (
	groupChild   = "Inside a running task: taskd child COMMAND"
	groupAliases = "Aliases (removed in the next release)"
)

// groups orders the headings of the command list.
var groups = []string{"Daemon", "Tasks", "Workflows", groupChild, "Service", "Other", groupAliases}

// alias returns the alias old of command c: the same command under its
// former name, kept for one release. when, if set, says which arguments
// call the alias where another command has the same name.
func alias(old string, c *command, when func(args []string) bool, whenWords string) *command {
	short := "old name of 'taskd " + c.name + "'"
	if whenWords != "" {
		short = whenWords + ": " + short
	}
	long := fmt.Sprintf(`
%s is the old name of 'taskd %s', kept for one release and removed in
the next: it works, and fails, exactly as that command does (its usage,
flags and exit status are the same). Run 'taskd help %s' for the manual.
`, strings.ToUpper(old[:1])+old[1:], c.name, c.name)
	if whenWords != "" {
		long = fmt.Sprintf(`
'taskd %s' %s is the old name of 'taskd %s', kept for one release and
removed in the next: it works, and fails, exactly as that command does (its
usage, flags and exit status are the same). Run 'taskd help %s' for the
manual.
`, old, whenWords, c.name, c.name)
	}
	return &command{name: old, usage: c.usage, short: short, long: long, group: groupAliases,
		replacedBy: c.name, when: when, run: func(ctx context.Context, inv *invocation) error { return c.run(ctx, inv) }}
}

// resolve returns the command args name (with args after it): an alias
// whose when accepts args, else the command of that name that has no when.
func resolve(name string, args []string) *command {
	var plain *command
	for _, c := range table() {
		switch {
		case c.name != name:
		case c.when == nil:
			plain = c
		case c.when(args):
			return c
		}
	}
	return plain
}

// inTask reports whether a command of an agent's would act for a task:
// $TASKD_TASK_FILE is set or args give --task.
func inTask(args []string) bool {
	if os.Getenv("TASKD_TASK_FILE") != "" {
		return true
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "task" {
			return true
		}
	}
	return false
}

// named returns the commands called name, in the order of their groups
// (run and start are each a command and an alias).
func named(name string) []*command {
	var out []*command
	for _, g := range groups {
		for _, c := range table() {
			if c.name == name && c.group == g {
				out = append(out, c)
			}
		}
	}
	return out
}

// inGroup returns the commands of group g, in the order they were
// registered.
func inGroup(g string) []*command {
	var out []*command
	for _, c := range table() {
		if c.group == g {
			out = append(out, c)
		}
	}
	return out
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "Taskd runs the task files in ~/.claude/tasks/<list>/ that are addressed to it.\n\nUsage: taskd COMMAND [ARGUMENTS]\n")
	for _, g := range groups {
		printGroup(w, g)
	}
	fmt.Fprint(w, "\nRun 'taskd help COMMAND' for the manual of one command, or 'go doc github.com/taskd/taskd/cmd/taskd' for all of it.\n")
}

// printGroup writes the heading of group g and a line per command in it.
func printGroup(w io.Writer, g string) {
	cs := inGroup(g)
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", g)
	for _, c := range cs {
		fmt.Fprintf(w, "  %-15s %s\n", c.name, c.short)
	}
}

// printChildUsage is the list of the child commands: 'taskd help child'.
func printChildUsage(w io.Writer) {
	fmt.Fprint(w, "The commands an agent that taskd runs uses on its own task (found through\n$TASKD_TASK_FILE, or --task LIST/ID).\n\nUsage: taskd child COMMAND [ARGUMENTS]\n")
	printGroup(w, groupChild)
	fmt.Fprint(w, "\nRun 'taskd help child COMMAND' (or 'taskd child help COMMAND') for the manual of one.\n")
}

// manual renders the manual section of c: usage line and long text.
func manual(c *command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: taskd %s %s\n\n", c.name, c.usage)
	b.WriteString(strings.TrimSpace(c.long))
	b.WriteString("\n")
	return b.String()
}

func init() {
	register(&command{
		name:  "help",
		usage: "[COMMAND | child [COMMAND]]",
		short: "show the list of commands or the manual of one",
		group: "Other",
		long: `
Help prints the list of commands, or with a command name the manual of that
command (for run and start, both: the command, and the alias of that name).
'taskd help child' lists the commands an agent uses on its own task, and
'taskd help child push' (or 'taskd child help push') prints the manual of
one of them. The same text, for every command, is the package
documentation: go doc github.com/taskd/taskd/cmd/taskd. An unknown command
name is an error (status 1).
`,
		run: func(ctx context.Context, inv *invocation) error {
			switch {
			case len(inv.args) == 0:
				printUsage(inv.stdout)
				return nil
			case len(inv.args) == 1 && inv.args[0] == childPrefix:
				printChildUsage(inv.stdout)
				return nil
			}
			name := strings.Join(inv.args, " ")
			found := named(name)
			if len(found) == 0 {
				return fmt.Errorf("no command %q; run 'taskd help' for the list", name)
			}
			for i, c := range found {
				if i > 0 {
					fmt.Fprintln(inv.stdout)
				}
				if len(found) > 1 {
					fmt.Fprintf(inv.stdout, "%s:\n", c.group)
				}
				fmt.Fprint(inv.stdout, manual(c))
			}
			return nil
		},
	})
}
