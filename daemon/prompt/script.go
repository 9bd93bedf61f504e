package prompt

import (
	"slices"
	"strconv"
	"strings"
)

// Script is a parsed prompt: the slash lines before the content, the
// content, and the slash lines after it.
type Script struct {
	Leading  []Step // run before the agent starts, in order
	Content  string // the agent's prompt: blank lines around it trimmed, otherwise as written; "" when there is none
	Trailing []Step // run after the agent succeeds, in order; only *Push
}

// Step is a command and the line it was written on.
type Step struct {
	Line int // 1-based line in the prompt
	Cmd  Command
}

// ParseOptions tells Parse what else it may recognise.
type ParseOptions struct {
	// Commands reports whether name is a user-defined command (a command
	// file), so that `/name args` is an *Invoke. Built-in command words
	// (and check, receive, send, queue, inbox) are never passed to it. Nil
	// means there are none.
	Commands func(name string) bool
}

// builtins are the command words of prompt lines, in the order errors list them.
var builtins = []string{"read", "push", "run", "subtask", "delegate", "handoff", "converge"}

// agentCommands are what an agent runs through the taskd CLI while it
// works; they are not prompt lines.
var agentCommands = []string{"check", "receive", "send", "queue", "inbox"}

// Parse splits a prompt into its leading slash lines, its content and its
// trailing slash lines, and parses each slash line.
//
// A line is a slash line when it starts with "/" and a command word
// ([a-z][a-z0-9_-]*) followed by a blank, "{" or the end of the line; so
// "/usr/bin/foo is broken" is content. The leading block runs from the top
// to the first other non-blank line; a /subtask line ends it, the rest of
// that line starting the content. The trailing block is the slash lines
// (and blank lines) after the last content line; only /push may appear
// there. Slash lines inside the content are content. Blank lines in both
// blocks are ignored. Nothing is expanded: prompts of /push, files of
// /read and the bodies of commands are not parsed.
//
// Parse fails with an *Error naming the line: text that is not UTF-8, an
// unknown command word, a command other than /push after the content, a
// malformed command, two /push lines of one block with the same name, or a
// /subtask without a prompt.
func Parse(text string, opts ParseOptions) (*Script, error) {
	if err := checkUTF8(text, true); err != nil {
		return nil, err
	}
	raw := strings.Split(text, "\n")
	s := &Script{}
	var content []string // raw content lines
	i := 0
	for ; i < len(raw); i++ {
		line := cmdText(raw[i])
		if isBlank(line) {
			continue
		}
		w, rest, ok := commandWord(line)
		if !ok {
			break
		}
		if w == "subtask" {
			o, after, err := blockPrefix(rest)
			if err != nil {
				return nil, at(err, i+1, line)
			}
			s.Leading = append(s.Leading, Step{i + 1, &Subtask{o}})
			// The prompt starts right after the block, on the raw line.
			first := raw[i][len(line)-len(after):]
			content = append(content, strings.TrimLeft(first, " \t"))
			i++
			break
		}
		cmd, err := parseCommand(w, rest, opts)
		if err != nil {
			return nil, at(err, i+1, line)
		}
		s.Leading = append(s.Leading, Step{i + 1, cmd})
	}
	end := len(raw)
	for end > i && (isBlank(raw[end-1]) || isSlashLine(raw[end-1])) {
		end--
	}
	content = append(content, raw[i:end]...)
	for len(content) > 0 && isBlank(content[0]) {
		content = content[1:]
	}
	for len(content) > 0 && isBlank(content[len(content)-1]) {
		content = content[:len(content)-1]
	}
	s.Content = strings.Join(content, "\n")
	if len(s.Leading) > 0 && s.Content == "" {
		if st := s.Leading[len(s.Leading)-1]; isSubtask(st.Cmd) {
			return nil, &Error{Line: st.Line, Text: cmdText(raw[st.Line-1]), Msg: "/subtask needs a prompt, on its line or the lines after it"}
		}
	}
	for j := end; j < len(raw); j++ {
		line := cmdText(raw[j])
		if isBlank(line) {
			continue
		}
		w, rest, _ := commandWord(line)
		if w != "push" {
			if !isKnown(w, opts) {
				_, err := parseCommand(w, rest, opts) // says why w is not a command
				return nil, at(err, j+1, line)
			}
			return nil, &Error{Line: j + 1, Text: line, Msg: "only /push may follow the content; move /" + w + " before the content"}
		}
		p, err := parsePush(rest)
		if err != nil {
			return nil, at(err, j+1, line)
		}
		s.Trailing = append(s.Trailing, Step{j + 1, p})
	}
	if err := uniqueNames(s.Leading, raw); err != nil {
		return nil, err
	}
	if err := uniqueNames(s.Trailing, raw); err != nil {
		return nil, err
	}
	return s, nil
}

// cmdText is a line as slash-line parsing sees it: trailing blanks and
// carriage returns removed.
func cmdText(raw string) string { return strings.TrimRight(raw, " \t\r") }

// commandWord reports whether line is a slash line, and returns its
// command word and what follows the word.
func commandWord(line string) (w, rest string, ok bool) {
	if len(line) < 2 || line[0] != '/' || line[1] < 'a' || line[1] > 'z' {
		return "", "", false
	}
	i := 2
	for i < len(line) && (line[i] >= 'a' && line[i] <= 'z' || isDigit(line[i]) || line[i] == '_' || line[i] == '-') {
		i++
	}
	if i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != '{' {
		return "", "", false
	}
	return line[1:i], line[i:], true
}

func isSlashLine(raw string) bool {
	_, _, ok := commandWord(cmdText(raw))
	return ok
}

func isSubtask(c Command) bool {
	_, ok := c.(*Subtask)
	return ok
}

// isKnown reports whether w is a built-in command or a command file.
func isKnown(w string, opts ParseOptions) bool {
	if slices.Contains(builtins, w) {
		return true
	}
	return !slices.Contains(agentCommands, w) && opts.Commands != nil && opts.Commands(w)
}

// parseCommand parses a leading slash line other than /subtask.
func parseCommand(w, rest string, opts ParseOptions) (Command, error) {
	if slices.Contains(builtins, w) && w != "subtask" && strings.HasPrefix(rest, "{") {
		return nil, errorf("/%s takes no {…} block; only /subtask and command files do", w)
	}
	switch w {
	case "read":
		return parseRead(rest)
	case "push":
		return parsePush(rest)
	case "run":
		return parseRun(rest)
	case "subtask":
		return nil, errorf("/subtask must be the last slash line before the content")
	case "delegate", "handoff", "converge":
		return parseACELine(w, rest)
	}
	if slices.Contains(agentCommands, w) {
		return nil, errorf("/%s is not a prompt line: an agent runs `taskd %s` while it works", w, w)
	}
	if opts.Commands != nil && opts.Commands(w) {
		o, after, err := blockPrefix(rest)
		if err != nil {
			return nil, err
		}
		return &Invoke{Name: w, Overrides: o, Args: trimBlanks(after)}, nil
	}
	hint := suggest(w, builtins, "/", "")
	if hint == "" {
		hint = "; if the line is text for the agent, reword it so that it does not start with /" + w
	}
	return nil, errorf("unknown command /%s (known: /%s and command files)%s", w, strings.Join(builtins, ", /"), hint)
}

// blockPrefix parses the {…} block that may follow a command word and
// returns it with the text after it.
func blockPrefix(rest string) (Overrides, string, error) {
	s := strings.TrimLeft(rest, " \t")
	if !strings.HasPrefix(s, "{") {
		return Overrides{}, s, nil
	}
	return parseBlock(s)
}

// uniqueNames checks that no two /push steps share a name.
func uniqueNames(steps []Step, raw []string) error {
	seen := map[string]int{}
	for _, st := range steps {
		p, ok := st.Cmd.(*Push)
		if !ok || p.Name == "" {
			continue
		}
		if first, dup := seen[p.Name]; dup {
			return &Error{Line: st.Line, Text: cmdText(raw[st.Line-1]),
				Msg: "name " + p.Name + " is already used by the /push on line " + strconv.Itoa(first)}
		}
		seen[p.Name] = st.Line
	}
	return nil
}

// String renders the script in canonical form: one line per step (each
// its command's String), the content as it is, and no blank lines. Parse
// of the result, with the same ParseOptions, gives an equal script but for
// line numbers.
func (s *Script) String() string {
	var lines []string
	content := s.Content
	for _, st := range s.Leading {
		line := st.Cmd.String()
		if isSubtask(st.Cmd) {
			// The prompt's first line goes on the /subtask line, unless it
			// starts with a blank that the line would lose.
			first, rest, _ := strings.Cut(content, "\n")
			if first != "" && first[0] != ' ' && first[0] != '\t' {
				line += " " + first
				content = rest
			}
		}
		lines = append(lines, line)
	}
	if content != "" {
		lines = append(lines, content)
	}
	for _, st := range s.Trailing {
		lines = append(lines, st.Cmd.String())
	}
	return strings.Join(lines, "\n")
}

// HasCommands is a cheap test for prompts that may hold command lines.
func HasCommands(text string) bool {
	return strings.HasPrefix(text, "/") || strings.Contains(text, "\n/")
}
