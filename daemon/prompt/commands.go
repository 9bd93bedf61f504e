package prompt

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Command is one slash line of a prompt: *Read, *Push, *Run, *Subtask,
// *Invoke, *Delegate, *Handoff or *Converge. String renders it as a line
// that parses back to an equal command.
type Command interface {
	String() string
	isCommand()
}

// Read is `/read FILE`: inject FILE into the agent's context. The path is
// kept as written ("~" included); the daemon resolves it.
type Read struct {
	Path string
}

// Push is `/push [name=N] [model=M] [agent=A] [timeout=S] [after=A,B]
// [seq=true] PROMPT`: create a queued child task. Its prompt is kept
// verbatim, slash lines included: they are the child's own, parsed when the
// child starts.
type Push struct {
	Name    string        // name=; "" when not given (the daemon picks one)
	Model   string        // model=; "" when not given
	Agent   string        // agent=; "" when not given
	Timeout time.Duration // timeout=; 0 when not given
	After   []string      // after=: names (or ids) of children it runs after; nil when none
	Seq     bool          // seq=true: a sequential child, run after the earlier ones in order
	Cwd     string        // cwd=: where it runs instead of its parent's directory; "" when not given
	// Worktree is worktree=true or false: whether it runs in a git
	// worktree of its own, instead of what its parent says; nil when not
	// given.
	Worktree *bool
	Prompt   string // never empty
}

// Run is `/run [N]`: start up to N queued children.
type Run struct {
	N int // how many to start; 0 means all of them
}

// Subtask is `/subtask {…} PROMPT`: the task runs with the block's
// overrides, and PROMPT (the rest of the line, then the lines after it) is
// the content of the Script it appears in.
type Subtask struct {
	Overrides Overrides
}

// Invoke is `/name {…} ARGS`: run the user's command file name with
// arguments ARGS, its frontmatter overridden by the block.
type Invoke struct {
	Name      string    // the command word, without "/"
	Overrides Overrides // the block; zero when there is none
	Args      string    // the rest of the line, blanks trimmed; may be ""
}

func (*Read) isCommand()    {}
func (*Push) isCommand()    {}
func (*Run) isCommand()     {}
func (*Subtask) isCommand() {}
func (*Invoke) isCommand()  {}

// String implements Command.
func (r *Read) String() string {
	if r.Path == "" || r.Path[0] == '"' || strings.ContainsAny(r.Path, " \t\r\n") {
		return "/read " + quote(r.Path)
	}
	return "/read " + r.Path
}

// String implements Command. The prompt is always quoted.
func (p *Push) String() string {
	var b strings.Builder
	b.WriteString("/push ")
	for _, o := range []struct{ k, v string }{{"name", p.Name}, {"model", p.Model}, {"agent", p.Agent}} {
		if o.v != "" {
			b.WriteString(o.k + "=" + word(o.v) + " ")
		}
	}
	if p.Timeout > 0 {
		b.WriteString("timeout=" + p.Timeout.String() + " ")
	}
	if len(p.After) > 0 {
		b.WriteString("after=" + strings.Join(p.After, ",") + " ")
	}
	if p.Seq {
		b.WriteString("seq=true ")
	}
	if p.Cwd != "" {
		b.WriteString("cwd=" + word(p.Cwd) + " ")
	}
	if p.Worktree != nil {
		b.WriteString(fmt.Sprintf("worktree=%t ", *p.Worktree))
	}
	b.WriteString(quote(p.Prompt))
	return b.String()
}

// String implements Command.
func (r *Run) String() string {
	if r.N == 0 {
		return "/run"
	}
	return "/run " + strconv.Itoa(r.N)
}

// String implements Command; it renders the line without its prompt.
func (s *Subtask) String() string { return "/subtask " + s.Overrides.String() }

// String implements Command.
func (c *Invoke) String() string {
	line := "/" + c.Name
	if !c.Overrides.IsZero() || strings.HasPrefix(c.Args, "{") {
		line += " " + c.Overrides.String()
	}
	if c.Args != "" {
		line += " " + c.Args
	}
	return line
}

// parseRead parses the arguments of /read.
func parseRead(args string) (*Read, error) {
	s := trimBlanks(args)
	switch {
	case s == "":
		return nil, errorf("/read needs a file: /read path/to/file.md")
	case s[0] == '"':
		path, rest, err := unquote(s, "the path")
		if err != nil {
			return nil, err
		}
		if trimBlanks(rest) != "" {
			return nil, errorf("text after the quoted path; /read takes one file (use one /read line per file)")
		}
		if path == "" {
			return nil, errorf("/read needs a file: the quoted path is empty")
		}
		return &Read{Path: path}, nil
	case strings.ContainsAny(s, " \t"):
		return nil, errorf(`the path contains a blank; quote it (/read "my notes.md") or use one /read line per file`)
	}
	return &Read{Path: s}, nil
}

// taskIDPattern is what a task id (and so a child's name) may be.
var taskIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// pushOptions are the options /push takes before its prompt.
var pushOptions = []string{"name", "model", "agent", "timeout", "after", "seq", "cwd", "worktree"}

// parsePush parses the arguments of /push.
func parsePush(args string) (*Push, error) {
	p := &Push{}
	seen := map[string]bool{}
	s := trimBlanks(args)
	for {
		key, ok := optionKey(s)
		if !ok {
			break
		}
		if !slices.Contains(pushOptions, key) {
			hint := suggest(key, pushOptions, "", "=")
			if hint == "" {
				hint = fmt.Sprintf("; to start the prompt with %q, quote the prompt", key+"=")
			}
			return nil, errorf("unknown option %s= (known: name=, model=, agent=, timeout=, after=, seq=, cwd=, worktree=)%s", key, hint)
		}
		if seen[key] {
			return nil, errorf("option %s= appears twice", key)
		}
		seen[key] = true
		val, rest, err := optionValue(s[len(key)+1:], key)
		if err != nil {
			return nil, err
		}
		if err := p.set(key, val); err != nil {
			return nil, err
		}
		s = trimBlanks(rest)
	}
	switch {
	case s == "":
		return nil, errorf(`/push needs a prompt: /push name=tests "write the tests"`)
	case s[0] == '"':
		prompt, rest, err := unquote(s, "the prompt")
		if err != nil {
			return nil, err
		}
		if trimBlanks(rest) != "" {
			return nil, errorf(`text after the quoted prompt; put all of the prompt inside the quotes (write \" for a quote)`)
		}
		p.Prompt = prompt
	case s[0] == '{':
		return nil, errorf(`/push takes no {…} block: write options as name=, model=, agent=, timeout=, after=, seq=, cwd=, worktree=, or quote a prompt that starts with "{"`)
	default:
		p.Prompt = s
	}
	if isBlank(p.Prompt) {
		return nil, errorf("/push needs a prompt: the prompt is empty")
	}
	if p.Name != "" && slices.Contains(p.After, p.Name) {
		return nil, errorf("after=%s names the child itself; a child runs after others", p.Name)
	}
	return p, nil
}

func (p *Push) set(key, val string) error {
	switch key {
	case "name":
		if !namePattern.MatchString(val) {
			return errorf("name %q is not a name: use 1 to 64 letters, digits, _ or -", val)
		}
		p.Name = val
	case "model", "agent":
		if val == "" || strings.ContainsAny(val, " \t\r\n") {
			return errorf("%s= needs a value without blanks, not %q", key, val)
		}
		if key == "model" {
			p.Model = val
		} else {
			p.Agent = val
		}
	case "timeout":
		d, err := parseTimeout(val, "timeout=")
		if err != nil {
			return err
		}
		p.Timeout = d
	case "after":
		for _, n := range strings.Split(val, ",") {
			if !taskIDPattern.MatchString(n) {
				return errorf("after=%s: %q is not the name or id of a child: write after=a or after=a,b (names of 1 to 64 letters, digits, _ or -)", val, n)
			}
			if !slices.Contains(p.After, n) {
				p.After = append(p.After, n)
			}
		}
	case "seq":
		if val != "true" && val != "false" {
			return errorf("seq= takes true or false, not %q", val)
		}
		p.Seq = val == "true"
	case "cwd":
		if val == "" || strings.ContainsRune(val, 0) {
			return errorf("cwd= needs a directory, not %q", val)
		}
		p.Cwd = val
	case "worktree":
		if val != "true" && val != "false" {
			return errorf("worktree= takes true or false, not %q", val)
		}
		w := val == "true"
		p.Worktree = &w
	}
	return nil
}

// optionKey reports whether s starts with `word=` and returns the word.
func optionKey(s string) (string, bool) {
	i := 0
	for i < len(s) && (isLetter(s[i]) || i > 0 && (isDigit(s[i]) || s[i] == '_' || s[i] == '-')) {
		i++
	}
	if i == 0 || i == len(s) || s[i] != '=' {
		return "", false
	}
	return s[:i], true
}

// optionValue reads an option's value: a quoted string, or the text up to
// the next blank.
func optionValue(s, key string) (val, rest string, err error) {
	if strings.HasPrefix(s, `"`) {
		return unquote(s, "the value of "+key+"=")
	}
	end := strings.IndexAny(s, " \t")
	if end < 0 {
		end = len(s)
	}
	return s[:end], s[end:], nil
}

// parseRun parses the arguments of /run.
func parseRun(args string) (*Run, error) {
	s := trimBlanks(args)
	if s == "" {
		return &Run{}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strings.TrimLeft(s, "0123456789") != "" {
		return nil, errorf("/run takes how many queued tasks to start (a whole number ≥ 1), or nothing to start them all; not %q", s)
	}
	return &Run{N: n}, nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
