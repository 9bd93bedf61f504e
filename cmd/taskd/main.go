package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// stdin is where commands that read input (taskd submit -) read it; tests
// replace it.
var stdin io.Reader = os.Stdin

// main only translates between the process and run.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on stderr (unless it was already reported) and
// returns the process's exit status: 0 for success, the code of an
// *exitError, 2 for usage errors and 1 for everything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "taskd: %v\n", ee.err)
		}
		return ee.code
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if errors.Is(err, errUsage) {
		return 2 // the flag package or the command already printed why
	}
	fmt.Fprintf(stderr, "taskd: %v\n", err)
	return 1
}

// exitError asks main to exit with a particular status. A nil err means the
// command already wrote everything it had to say.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// errUsage marks an error whose explanation has already been printed along
// with the command's usage.
var errUsage = errors.New("usage error")

// run executes the command line args (without the program name). It is
// main's whole body, callable from tests with their own context and
// writers.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stderr)
		return errUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	if name == childPrefix {
		switch {
		case len(rest) == 0:
			printChildUsage(stderr)
			return errUsage
		case rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help":
			name, rest = "help", append([]string{childPrefix}, rest[1:]...)
		default:
			name, rest = childPrefix+" "+rest[0], rest[1:]
		}
	}
	cmd := resolve(name, rest)
	if cmd == nil {
		fmt.Fprintf(stderr, "taskd: unknown command %q\nRun 'taskd help' for the list of commands.\n", name)
		return errUsage
	}
	return cmd.run(ctx, &invocation{cmd: cmd, args: rest, stdout: stdout, stderr: stderr})
}
