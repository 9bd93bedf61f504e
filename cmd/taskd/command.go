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
	name  string // as typed
	usage string // arguments, after "taskd NAME "
	short string // one line for the command list
	long  string // the manual section: what it does, flags, examples
	group string // heading in the command list
	run   func(ctx context.Context, inv *invocation) error
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
// FlagSet has already printed them).
func (inv *invocation) parse(fs *flag.FlagSet) error {
	if err := fs.Parse(inv.args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return errUsage
	}
	return nil
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

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// runCommand resolves "run", the name of two commands: the daemon, and,
// for an agent inside a running task ($TASKD_TASK_FILE set, or --task
// given), starting that task's queued children.
func runCommand(args []string) *command {
	inTask := os.Getenv("TASKD_TASK_FILE") != ""
	for _, a := range args {
		if a == "--" {
			break
		}
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "task" {
			inTask = true
		}
	}
	for _, c := range commands {
		if c.name == "run" && (c.group == "Inside a running task") == inTask {
			return c
		}
	}
	return nil
}

// groups orders the headings of the command list.
var groups = []string{"Daemon", "Tasks", "Workflows", "Inside a running task", "Service", "Other"}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "Taskd runs the task files in ~/.claude/tasks/<list>/ that are addressed to it.\n\nUsage: taskd COMMAND [ARGUMENTS]\n")
	byGroup := map[string][]*command{}
	for _, c := range commands {
		byGroup[c.group] = append(byGroup[c.group], c)
	}
	for _, g := range groups {
		cs := byGroup[g]
		if len(cs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, c := range cs {
			fmt.Fprintf(w, "  %-15s %s\n", c.name, c.short)
		}
	}
	fmt.Fprint(w, "\nRun 'taskd help COMMAND' for the manual of one command, or 'go doc github.com/taskd/taskd/cmd/taskd' for all of it.\n")
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
		usage: "[COMMAND]",
		short: "show the list of commands or the manual of one",
		group: "Other",
		long: `
Help prints the list of commands, or with a command name the manual of that
command. The same text, for every command, is the package documentation:
go doc github.com/taskd/taskd/cmd/taskd.
`,
		run: func(ctx context.Context, inv *invocation) error {
			if len(inv.args) == 0 {
				printUsage(inv.stdout)
				return nil
			}
			c := lookup(inv.args[0])
			if c == nil {
				return fmt.Errorf("no command %q; run 'taskd help' for the list", inv.args[0])
			}
			fmt.Fprint(inv.stdout, manual(c))
			return nil
		},
	})
}
