package prompt

import (
	"slices"
	"strings"
)

// An Invocation is a command file invoked by a /name {…} ARGS line,
// resolved: the prompt the task runs and the settings it runs with.
type Invocation struct {
	Body      string    // the command's body, its $ARGUMENTS filled in
	Overrides Overrides // the frontmatter under the line's block, with the arguments filled in
}

// Invoke resolves an invocation of c with the line's block and arguments.
// The block goes over the frontmatter, setting by setting (MergeOverrides).
//
// The arguments may be pipe arguments: parts separated by || (outside
// double quotes). The first part is the command's own arguments: it fills
// $ARGUMENTS in the body and in every item of return and parallel and in
// the loop's condition (an item that invokes a command passes them on).
// Each further part, in order, becomes the arguments of the next parallel
// item that invokes a command file, and after those of the next return
// item that does, in place of the arguments the item was written with. A
// part left over (more parts than such items) is an error, as nothing is
// dropped silently: quote the arguments to pass || as text.
func (c *CommandFile) Invoke(block Overrides, args string) (Invocation, error) {
	o, err := MergeOverrides(c.Overrides, block)
	if err != nil {
		return Invocation{}, err
	}
	parts := pipeParts(args)
	own, pipes := parts[0], parts[1:]
	fill := func(items []string) []string {
		out := cloneList(items)
		for i, item := range out {
			if len(pipes) > 0 {
				if withArgs, ok := replaceArgs(item, pipes[0]); ok {
					out[i], pipes = withArgs, pipes[1:]
					continue
				}
			}
			out[i] = ExpandArguments(item, own)
		}
		return out
	}
	o.Parallel = fill(o.Parallel)
	o.Return = fill(o.Return)
	if len(pipes) > 0 {
		return Invocation{}, errorf("/%s: the arguments have %d parts separated by ||, one for the command and one for each of its parallel and return commands, which are %d; quote the arguments to pass || as text",
			c.Name, len(parts), len(parts)-1-len(pipes))
	}
	if o.Loop != nil {
		l := *o.Loop
		l.Until, l.UntilCommand = ExpandArguments(l.Until, own), ExpandArguments(l.UntilCommand, own)
		o.Loop = &l
	}
	return Invocation{Body: c.Expand(own), Overrides: o}, nil
}

// pipeParts splits a command's arguments at every || outside double
// quotes; the parts are trimmed. There is always at least one part.
func pipeParts(args string) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == '\\' && quoted:
			i++
		case args[i] == '"':
			quoted = !quoted
		case !quoted && strings.HasPrefix(args[i:], "||"):
			parts = append(parts, trimBlanks(args[start:i]))
			start = i + 2
			i++
		}
	}
	return append(parts, trimBlanks(args[start:]))
}

// replaceArgs returns item, a /name {…} ARGS line that invokes a command
// file, with args in place of its arguments; false for any other item (a
// prompt, a built-in command).
func replaceArgs(item, args string) (string, bool) {
	if !strings.HasPrefix(item, "/") {
		return "", false
	}
	end := 1
	for end < len(item) && (isLetter(item[end]) || isDigit(item[end]) || item[end] == '_' || item[end] == '-') {
		end++
	}
	name := item[1:end]
	if !commandName.MatchString(name) || slices.Contains(builtins, name) || slices.Contains(agentCommands, name) {
		return "", false
	}
	head, rest := item[:end], item[end:]
	if r := trimBlanks(rest); strings.HasPrefix(r, "{") {
		_, after, err := parseBlock(r)
		if err != nil {
			return "", false
		}
		head += " " + strings.TrimSpace(r[:len(r)-len(after)])
	} else if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false // "/name…" is not a command word followed by its arguments
	}
	if args == "" {
		return head, true
	}
	return head + " " + args, true
}
