package prompt

import (
	"strings"
	"time"
)

// The subagent commands /delegate, /handoff and /converge, as prompt lines
// and as the arguments of `taskd delegate|handoff|converge`.

// Defaults of the subagent commands.
const (
	DefaultDelegateTimeout = 300 * time.Second
	DefaultHandoffTimeout  = 600 * time.Second
)

// The values the subagent commands' flags accept.
var (
	agentTypes          = []string{"builder", "tester", "analyzer", "retriever"}
	permissionModes     = []string{"plan", "acceptEdits", "bypassPermissions"}
	failureActions      = []string{"retry", "abort", "escalate"}
	strategies          = []string{"merge", "vote", "consensus", "first_success"}
	conflictResolutions = []string{"manual", "auto_accept_latest", "prefer_higher_confidence"}
	outputFormats       = []string{"json", "markdown", "delta_batch"}
)

// Delegate is `/delegate TASK --agent-type T [--inherit-context]
// [--permission-mode M] [--timeout S] [--tools a,b]`: start a child task
// without waiting for it.
type Delegate struct {
	Task           string        // never empty
	AgentType      string        // one of agentTypes
	InheritContext bool          // --inherit-context; false: the child starts from its prompt alone
	PermissionMode string        // one of permissionModes; "" when not given: the parent's mode
	Timeout        time.Duration // --timeout, else DefaultDelegateTimeout
	Tools          []string      // --tools; nil when not given: the parent's tools
}

// Handoff is `/handoff ID [--transfer-control] [--timeout S]
// [--on-failure A]`: wait for a child.
type Handoff struct {
	ID              string        // the child's task id or name
	TransferControl bool          // --transfer-control: the parent is suspended until the child ends
	Timeout         time.Duration // --timeout, else DefaultHandoffTimeout
	OnFailure       string        // one of failureActions; "escalate" when not given
}

// Converge is `/converge ID ID… --strategy S [--conflict-resolution C]
// [--output-format F]`: combine the results of finished children.
type Converge struct {
	IDs                []string // at least 2 (3 for vote), no repeats
	Strategy           string   // one of strategies
	ConflictResolution string   // one of conflictResolutions; "manual" when not given
	OutputFormat       string   // one of outputFormats; "json" when not given
}

func (*Delegate) isCommand() {}
func (*Handoff) isCommand()  {}
func (*Converge) isCommand() {}

// ParseDelegateArgs parses the arguments of `taskd delegate`: the task's
// words, then the flags. Flags are written --flag value or --flag=value (a
// single leading dash works too); every word from the first flag on must
// be a flag or a flag's value. It fails with an *Error naming the flag or
// value that is wrong, or the missing --agent-type.
func ParseDelegateArgs(args []string) (*Delegate, error) { return parseDelegate(plainArgs(args)) }

// ParseHandoffArgs parses the arguments of `taskd handoff`: the id, then
// the flags, as ParseDelegateArgs.
func ParseHandoffArgs(args []string) (*Handoff, error) { return parseHandoff(plainArgs(args)) }

// ParseConvergeArgs parses the arguments of `taskd converge`: two or more
// ids, then the flags, as ParseDelegateArgs.
func ParseConvergeArgs(args []string) (*Converge, error) { return parseConverge(plainArgs(args)) }

func plainArgs(args []string) []arg {
	out := make([]arg, len(args))
	for i, a := range args {
		out[i] = arg{s: a}
	}
	return out
}

// checkArgs refuses arguments that are not UTF-8.
func checkArgs(args []arg) error {
	for _, a := range args {
		if err := checkUTF8(a.s, false); err != nil {
			err.Text = a.s
			return err
		}
	}
	return nil
}

// parseACELine parses the rest of a /delegate, /handoff or /converge line,
// split like a shell would split it.
func parseACELine(w, rest string) (Command, error) {
	args, err := splitArgs(rest)
	if err != nil {
		return nil, err
	}
	switch w {
	case "delegate":
		return parseDelegate(args)
	case "handoff":
		return parseHandoff(args)
	default:
		return parseConverge(args)
	}
}

func parseDelegate(args []arg) (*Delegate, error) {
	if err := checkArgs(args); err != nil {
		return nil, err
	}
	d := &Delegate{Timeout: DefaultDelegateTimeout}
	words, err := parseFlags("delegate", args, []flagSpec{
		{name: "agent-type", required: true, str: &d.AgentType, values: agentTypes},
		{name: "inherit-context", boolean: &d.InheritContext},
		{name: "permission-mode", str: &d.PermissionMode, values: permissionModes},
		{name: "timeout", set: timeout(&d.Timeout)},
		{name: "tools", set: func(v string) error {
			seen := map[string]bool{}
			for t := range strings.SplitSeq(v, ",") {
				t = trimBlanks(t)
				if t == "" {
					return errorf("--tools %q has an empty tool name; write --tools Read,Grep", v)
				}
				if seen[t] {
					return errorf("--tools names %s twice", t)
				}
				seen[t] = true
				d.Tools = append(d.Tools, t)
			}
			return nil
		}},
	})
	if err != nil {
		return nil, err
	}
	var task []string
	for _, w := range words {
		task = append(task, w.s)
	}
	d.Task = strings.Join(task, " ")
	if isBlank(d.Task) {
		return nil, errorf(`/delegate needs a task: /delegate "write the tests" --agent-type tester`)
	}
	return d, nil
}

func parseHandoff(args []arg) (*Handoff, error) {
	if err := checkArgs(args); err != nil {
		return nil, err
	}
	h := &Handoff{Timeout: DefaultHandoffTimeout, OnFailure: "escalate"}
	ids, err := parseFlags("handoff", args, []flagSpec{
		{name: "transfer-control", boolean: &h.TransferControl},
		{name: "timeout", set: timeout(&h.Timeout)},
		{name: "on-failure", str: &h.OnFailure, values: failureActions},
	})
	if err != nil {
		return nil, err
	}
	if len(ids) != 1 {
		return nil, errorf("/handoff takes one task id, not %d: /handoff 12 --transfer-control", len(ids))
	}
	if !idPattern.MatchString(ids[0].s) {
		return nil, errorf("%q is not a task id: use letters, digits, _ or -", ids[0].s)
	}
	h.ID = ids[0].s
	return h, nil
}

func parseConverge(args []arg) (*Converge, error) {
	if err := checkArgs(args); err != nil {
		return nil, err
	}
	c := &Converge{ConflictResolution: "manual", OutputFormat: "json"}
	ids, err := parseFlags("converge", args, []flagSpec{
		{name: "strategy", required: true, str: &c.Strategy, values: strategies},
		{name: "conflict-resolution", str: &c.ConflictResolution, values: conflictResolutions},
		{name: "output-format", str: &c.OutputFormat, values: outputFormats},
	})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !idPattern.MatchString(id.s) {
			return nil, errorf("%q is not a task id: use letters, digits, _ or -", id.s)
		}
		if seen[id.s] {
			return nil, errorf("task %s is named twice", id.s)
		}
		seen[id.s] = true
		c.IDs = append(c.IDs, id.s)
	}
	if len(c.IDs) < 2 {
		return nil, errorf("/converge needs at least 2 task ids, not %d: /converge 12 13 --strategy merge", len(c.IDs))
	}
	if c.Strategy == "vote" && len(c.IDs) < 3 {
		return nil, errorf("--strategy vote needs at least 3 task ids to have a majority, not %d", len(c.IDs))
	}
	return c, nil
}

// String implements Command. Defaults are written out.
func (d *Delegate) String() string {
	b := []string{"/delegate", quote(d.Task), "--agent-type", word(d.AgentType)}
	if d.InheritContext {
		b = append(b, "--inherit-context")
	}
	if d.PermissionMode != "" {
		b = append(b, "--permission-mode", word(d.PermissionMode))
	}
	b = append(b, "--timeout", d.Timeout.String())
	if d.Tools != nil {
		b = append(b, "--tools", word(strings.Join(d.Tools, ",")))
	}
	return strings.Join(b, " ")
}

// String implements Command. Defaults are written out.
func (h *Handoff) String() string {
	b := []string{"/handoff", word(h.ID)}
	if h.TransferControl {
		b = append(b, "--transfer-control")
	}
	b = append(b, "--timeout", h.Timeout.String(), "--on-failure", word(h.OnFailure))
	return strings.Join(b, " ")
}

// String implements Command. Defaults are written out.
func (c *Converge) String() string {
	b := []string{"/converge"}
	for _, id := range c.IDs {
		b = append(b, word(id))
	}
	b = append(b, "--strategy", word(c.Strategy), "--conflict-resolution", word(c.ConflictResolution),
		"--output-format", word(c.OutputFormat))
	return strings.Join(b, " ")
}
