package prompt

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// CommandFile is a user-defined command: a markdown file whose optional
// frontmatter (YAML between two --- lines) sets how the command runs and
// whose body is the prompt, with $ARGUMENTS standing for the arguments of
// the invocation.
type CommandFile struct {
	Name        string    // the command word: /Name invokes it
	Description string    // description:
	Subtask     bool      // subtask: true runs the command as a child task
	Overrides   Overrides // agent, model, loop, return, parallel and subtask2: auto (Auto)
	Body        string    // the prompt: blank lines around it trimmed, otherwise as written; never empty
}

// commandName is what a command word may be.
var commandName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// frontmatterKeys are the keys a command file's frontmatter accepts.
var frontmatterKeys = []string{"description", "agent", "model", "subtask", "return", "parallel", "loop", "as", "subtask2"}

// ParseCommandFile parses the command file of the command name (its file
// name without .md). The frontmatter accepts description, agent, model,
// subtask (true or false), return (a string or a list of strings),
// parallel (a string of comma-separated /commands, a list of strings, or a
// list of {command, arguments} mappings), loop (N, or a mapping of max,
// until and untilCommand), as (the name of its result, for $RESULT[name])
// and subtask2 (auto), written in a strict subset
// of YAML (docs/prompt-commands.md). It fails with an *Error naming the
// line of the file for anything else, for values of the wrong form, for
// text that is not UTF-8 and for a file without a body; the caller adds
// the file's path.
func ParseCommandFile(name string, data []byte) (*CommandFile, error) {
	if !commandName.MatchString(name) {
		return nil, errorf("command name %q is not a command word: use lower-case letters, digits, _ and -, starting with a letter", name)
	}
	if slices.Contains(builtins, name) || slices.Contains(agentCommands, name) {
		return nil, errorf("a command file cannot be named %s: /%s is built in", name, name)
	}
	if err := checkUTF8(string(data), true); err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimPrefix(string(data), "\ufeff"), "\n")
	c := &CommandFile{Name: name}
	body := 0
	if cmdText(lines[0]) == "---" {
		end := 0
		for j := 1; j < len(lines) && end == 0; j++ {
			if cmdText(lines[j]) == "---" {
				end = j
			}
		}
		if end == 0 {
			return nil, &Error{Line: 1, Text: "---", Msg: "the frontmatter that starts here has no closing --- line"}
		}
		fm, err := parseYAML(lines[1:end], 2)
		if err != nil {
			return nil, err
		}
		if err := c.frontmatter(fm); err != nil {
			return nil, err
		}
		body = end + 1
	}
	rest := lines[body:]
	for len(rest) > 0 && isBlank(rest[0]) {
		rest = rest[1:]
	}
	for len(rest) > 0 && isBlank(rest[len(rest)-1]) {
		rest = rest[:len(rest)-1]
	}
	if len(rest) == 0 {
		return nil, &Error{Line: len(lines), Msg: "the command has no prompt; write it after the frontmatter, with $ARGUMENTS where the arguments go"}
	}
	c.Body = strings.Join(rest, "\n")
	return c, nil
}

// frontmatter reads the parsed frontmatter into c.
func (c *CommandFile) frontmatter(m *ynode) error {
	o := &c.Overrides
	var last *ynode // the key whose value a rule across keys blames
	for i, key := range m.keys {
		v := m.vals[i]
		var err error
		switch key {
		case "description":
			c.Description, err = yscalar(key, v)
		case "agent", "model":
			var s string
			if s, err = yscalar(key, v); err == nil && strings.ContainsAny(s, " \t\r\n") {
				err = yerr(v, "%s %q contains a blank", key, s)
			}
			if key == "agent" {
				o.Agent = s
			} else {
				o.Model = s
			}
		case "subtask":
			if v.kind != yScalar || v.quoted || v.val != "true" && v.val != "false" {
				err = yerr(v, "subtask must be true or false")
			}
			c.Subtask = v.val == "true"
		case "return":
			o.Return, err = ylist(key, v, false)
		case "parallel":
			o.Parallel, err = ylist(key, v, true)
		case "loop":
			o.Loop, err = yloop(v)
			last = v
		case "as":
			if o.As, err = yscalar(key, v); err == nil && !namePattern.MatchString(o.As) {
				err = yerr(v, "as %q is not a name: use 1 to 64 letters, digits, _ or -", o.As)
			}
		case "subtask2":
			if v.kind != yScalar || v.val != "auto" {
				err = yerr(v, "subtask2 takes only auto (subtask2: auto)")
			}
			o.Auto = true
			last = v
		default:
			err = &Error{Line: v.line, Text: v.text, Msg: "unknown key " + strconv.Quote(key) + " (known: " +
				strings.Join(frontmatterKeys, ", ") + ")" + suggest(key, frontmatterKeys, "", "")}
		}
		if err != nil {
			return err
		}
	}
	if err := o.check(false); err != nil {
		if last == nil {
			last = m.vals[len(m.vals)-1]
		}
		return yerr(last, "%s", strings.Replace(err.Msg, "auto", "subtask2: auto", 1))
	}
	return nil
}

func yerr(v *ynode, format string, args ...any) *Error {
	e := errorf(format, args...)
	e.Line, e.Text = v.line, v.text
	return e
}

// yscalar reads a single value.
func yscalar(key string, v *ynode) (string, error) {
	switch v.kind {
	case yScalar:
		return v.val, nil
	case yNull:
		return "", yerr(v, "%s has no value", key)
	}
	return "", yerr(v, "%s takes a single value, not a list or mapping", key)
}

// ylist reads return or parallel: a string (for parallel, comma-separated
// commands), or a list of strings; parallel lists may also hold
// {command, arguments} mappings.
func ylist(key string, v *ynode, parallel bool) ([]string, error) {
	var out []string
	switch v.kind {
	case yNull:
		return nil, yerr(v, "%s has no value", key)
	case yScalar:
		if !parallel {
			out = []string{v.val}
			break
		}
		for item := range strings.SplitSeq(v.val, ",") {
			out = append(out, trimBlanks(item))
		}
	case yMap:
		return nil, yerr(v, "%s takes a string or a list, not a mapping", key)
	case yList:
		for _, it := range v.items {
			switch {
			case it.kind == yScalar:
				out = append(out, it.val)
			case it.kind == yMap && parallel:
				s, err := yinvocation(it)
				if err != nil {
					return nil, err
				}
				out = append(out, s)
			default:
				return nil, yerr(it, "%s items must be strings", key)
			}
		}
	}
	for i, s := range out {
		if isBlank(s) {
			return nil, yerr(v, "%s item %d is empty", key, i+1)
		}
	}
	return out, nil
}

// yinvocation reads a {command, arguments} list item as "/command arguments".
func yinvocation(m *ynode) (string, error) {
	var cmd, args string
	for i, k := range m.keys {
		v := m.vals[i]
		s, err := yscalar(k, v)
		if err != nil {
			return "", err
		}
		switch k {
		case "command":
			cmd = strings.TrimPrefix(s, "/")
			if !commandName.MatchString(cmd) {
				return "", yerr(v, "command %q is not a command word", s)
			}
		case "arguments":
			args = s
		default:
			return "", yerr(v, "unknown key %q in a parallel item (known: command, arguments)", k)
		}
	}
	if cmd == "" {
		return "", yerr(m, "a parallel item needs command:")
	}
	if args = trimBlanks(args); args != "" {
		return "/" + cmd + " " + args, nil
	}
	return "/" + cmd, nil
}

// yloop reads loop: N, or a mapping of max, until and untilCommand.
func yloop(v *ynode) (*Loop, error) {
	if v.kind == yScalar && !v.quoted {
		n, err := loopCount(v.val)
		if err != nil {
			return nil, yerr(v, "%s", err.(*Error).Msg)
		}
		return &Loop{Max: n}, nil
	}
	if v.kind != yMap {
		return nil, yerr(v, "loop takes a number or a mapping such as {max: 5, until: the tests pass}")
	}
	l := &Loop{}
	for i, k := range v.keys {
		e := v.vals[i]
		switch k {
		case "max":
			n, err := loopCount(e.val)
			if err != nil || e.kind != yScalar || e.quoted {
				return nil, yerr(e, "loop.max must be a whole number ≥ 1")
			}
			l.Max = n
		case "until", "untilCommand":
			s, err := yscalar("loop."+k, e)
			if err != nil {
				return nil, err
			}
			if isBlank(s) {
				return nil, yerr(e, "loop.%s is empty", k)
			}
			if k == "until" {
				l.Until = s
			} else {
				l.UntilCommand = s
			}
		default:
			return nil, yerr(e, "unknown key %q in loop (known: max, until, untilCommand)", k)
		}
	}
	if l.Max == 0 {
		if l.Until == "" && l.UntilCommand == "" {
			return nil, yerr(v, "loop needs max, until or untilCommand")
		}
		l.Max = DefaultLoopMax
	}
	return l, nil
}
