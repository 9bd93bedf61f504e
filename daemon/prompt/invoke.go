package prompt

import (
	"strconv"
	"strings"
)

// Expand returns the command's prompt for an invocation with args: the
// body with every $ARGUMENTS replaced by args. A body without $ARGUMENTS
// gets non-empty args appended as a paragraph of their own, so that
// arguments are never dropped.
func (c *CommandFile) Expand(args string) string {
	if strings.Contains(c.Body, "$ARGUMENTS") {
		return ExpandArguments(c.Body, args)
	}
	if args = strings.TrimSpace(args); args == "" {
		return c.Body
	}
	return c.Body + "\n\n" + args
}

// ExpandArguments replaces every $ARGUMENTS in text with args, and nothing
// else: the replacement is not scanned again.
func ExpandArguments(text, args string) string {
	return strings.ReplaceAll(text, "$ARGUMENTS", args)
}

// String renders the command file in canonical form: frontmatter keys in a
// fixed order, strings double-quoted, then the body. ParseCommandFile of
// the result, with the same name, gives an equal CommandFile.
func (c *CommandFile) String() string {
	var b strings.Builder
	o := c.Overrides
	b.WriteString("---\n")
	for _, kv := range []struct{ k, v string }{{"description", c.Description}, {"agent", o.Agent}, {"model", o.Model}} {
		if kv.v != "" {
			b.WriteString(kv.k + ": " + yquote(kv.v) + "\n")
		}
	}
	if c.Subtask {
		b.WriteString("subtask: true\n")
	}
	for _, l := range []struct {
		k     string
		items []string
	}{{"return", o.Return}, {"parallel", o.Parallel}} {
		if l.items == nil {
			continue
		}
		b.WriteString(l.k + ":\n")
		for _, it := range l.items {
			b.WriteString("  - " + yquote(it) + "\n")
		}
	}
	if o.Loop != nil {
		b.WriteString("loop:\n  max: " + strconv.Itoa(o.Loop.Max) + "\n")
		if o.Loop.Until != "" {
			b.WriteString("  until: " + yquote(o.Loop.Until) + "\n")
		}
		if o.Loop.UntilCommand != "" {
			b.WriteString("  untilCommand: " + yquote(o.Loop.UntilCommand) + "\n")
		}
	}
	if o.As != "" {
		b.WriteString("as: " + yquote(o.As) + "\n")
	}
	if o.Auto {
		b.WriteString("subtask2: auto\n")
	}
	b.WriteString("---\n")
	b.WriteString(c.Body)
	return b.String()
}
