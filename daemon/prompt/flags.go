package prompt

import (
	"slices"
	"strings"
	"time"
)

// flagSpec describes one flag of a subagent command. A flag sets exactly
// one of boolean, str (checked against values) or, through set, anything.
type flagSpec struct {
	name     string
	required bool
	boolean  *bool
	str      *string
	values   []string
	set      func(v string) error
}

// parseFlags reads args as positional words followed by flags, and returns
// the words. Flags are --name value, --name=value, or -name for either; a
// boolean flag takes no value (or =true, =false). Quoted arguments are
// never flags. Unknown, repeated and missing required flags, missing
// values and values not in a flag's list are errors naming the flag.
func parseFlags(cmd string, args []arg, specs []flagSpec) ([]arg, error) {
	var words []arg
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !isFlag(a) {
			if len(seen) > 0 {
				return nil, errorf("unexpected %q after the flags: /%s takes its %s before the flags (quote text that contains --)",
					a.s, cmd, positionals[cmd])
			}
			words = append(words, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a.s[1:], "-"), "=")
		var spec *flagSpec
		for j := range specs {
			if specs[j].name == name {
				spec = &specs[j]
			}
		}
		if spec == nil {
			return nil, errorf("unknown flag --%s for /%s (known: %s)%s", name, cmd, flagList(specs), suggestFlag(name, specs))
		}
		if seen[name] {
			return nil, errorf("flag --%s appears twice", name)
		}
		seen[name] = true
		if spec.boolean != nil {
			switch {
			case !hasVal || val == "true":
				*spec.boolean = true
			case val == "false":
				*spec.boolean = false
			default:
				return nil, errorf("flag --%s takes no value (or =true, =false), not %q", name, val)
			}
			continue
		}
		if !hasVal {
			if i+1 == len(args) || isFlag(args[i+1]) {
				return nil, errorf("flag --%s needs a value%s", name, valueHint(spec))
			}
			i++
			val = args[i].s
		}
		if val == "" {
			return nil, errorf("flag --%s needs a value%s", name, valueHint(spec))
		}
		if spec.str != nil {
			if !slices.Contains(spec.values, val) {
				return nil, errorf("--%s must be %s, not %q%s", name, orList(spec.values), val, suggest(val, spec.values, "", ""))
			}
			*spec.str = val
			continue
		}
		if err := spec.set(val); err != nil {
			return nil, err
		}
	}
	for _, sp := range specs {
		if sp.required && !seen[sp.name] {
			return nil, errorf("/%s needs --%s%s", cmd, sp.name, valueHint(&sp))
		}
	}
	return words, nil
}

// positionals names what comes before the flags, for errors.
var positionals = map[string]string{"delegate": "task", "handoff": "task id", "converge": "task ids"}

// isFlag reports whether a is a flag: unquoted, "-" or "--", then a letter.
func isFlag(a arg) bool {
	s := strings.TrimPrefix(a.s, "-")
	s = strings.TrimPrefix(s, "-")
	return !a.quoted && len(s) < len(a.s) && s != "" && isLetter(s[0])
}

func flagList(specs []flagSpec) string {
	var names []string
	for _, sp := range specs {
		names = append(names, "--"+sp.name)
	}
	return strings.Join(names, ", ")
}

func suggestFlag(name string, specs []flagSpec) string {
	var names []string
	for _, sp := range specs {
		names = append(names, sp.name)
	}
	return suggest(name, names, "--", "")
}

func valueHint(sp *flagSpec) string {
	if sp.values != nil {
		return " (" + orList(sp.values) + ")"
	}
	return ""
}

// orList writes "a, b or c".
func orList(vals []string) string {
	if len(vals) < 2 {
		return strings.Join(vals, "")
	}
	return strings.Join(vals[:len(vals)-1], ", ") + " or " + vals[len(vals)-1]
}

// timeout returns a flag setter for a timeout.
func timeout(d *time.Duration) func(string) error {
	return func(v string) error {
		t, err := parseTimeout(v, "--timeout")
		if err != nil {
			return err
		}
		*d = t
		return nil
	}
}
