package prompt

import (
	"slices"
	"strconv"
	"strings"
)

// Overrides are the settings a {…} block gives a /subtask prompt or a
// /command: the inline block syntax, compiled. The zero value overrides
// nothing. Fields and OverridesFromFields convert them to and from the
// canonical metadata.taskd fields; the block is only a way to write those.
type Overrides struct {
	Model    string   // model id (model:…); "" when not set
	Agent    string   // agent or profile name (agent:…); "" when not set
	Loop     *Loop    // loop:N, until:…, untilCommand:…; nil when the task does not loop
	Return   []string // follow-ups run in order after the task succeeds (return:a || b); nil when none
	Parallel []string // prompts or /commands run as concurrent children (parallel:/a x || /b y); nil when none
	As       string   // name of the task's result, for $RESULT[name] (as:…); "" when not set
	Auto     bool     // auto:true: the prompt is a request to a planner that writes the workflow
}

// Loop says how often a task runs again.
type Loop struct {
	Max          int    // most iterations, at least 1
	Until        string // condition a read-only judge checks after each iteration; "" when none
	UntilCommand string // shell command run after each iteration; exit status 0 means done; "" when none
}

// DefaultLoopMax is the most iterations of a loop given a condition but no
// count: {until:tests pass} is {loop:10 && until:tests pass}.
const DefaultLoopMax = 10

// blockKeys are the keys a {…} block accepts, in their canonical order.
var blockKeys = []string{"model", "agent", "loop", "until", "untilCommand", "return", "parallel", "as", "auto"}

// listKeys take several items separated by ||.
var listKeys = map[string]bool{"return": true, "parallel": true}

// ParseOverrides parses a {…} block on its own, such as
// `{model:opus && loop:5 && until:tests pass}`. Blanks around the braces
// are allowed; anything else outside them is an error. It fails with an
// *Error that names the offending key.
func ParseOverrides(block string) (Overrides, error) {
	if err := checkUTF8(block, false); err != nil {
		return Overrides{}, err
	}
	s := trimBlanks(block)
	if !strings.HasPrefix(s, "{") {
		return Overrides{}, &Error{Text: block, Msg: `a block starts with "{", as in {model:opus && loop:3}`}
	}
	o, rest, err := parseBlock(s)
	if err != nil {
		return Overrides{}, at(err, 0, block)
	}
	if trimBlanks(rest) != "" {
		return Overrides{}, &Error{Text: block, Msg: `text after the closing "}" of the block`}
	}
	return o, nil
}

// parseBlock parses the block at the start of s (s[0] is '{') and returns
// the overrides and the text after its closing '}'.
//
// Grammar: params separated by &&; a param is key:value, split at the
// first ':'; the values of return and parallel are items separated by ||.
// A value (or item) is either one "quoted string" with escapes, or plain
// text in which quoted runs and balanced {…} are kept as written and hide
// the separators and the closing brace.
func parseBlock(s string) (Overrides, string, error) {
	p := &blockParser{s: s, i: 1, vals: map[string][]string{}, quoted: map[string]bool{}}
	p.skipBlanks()
	if p.peek() == '}' {
		return Overrides{}, s[p.i+1:], nil
	}
	for {
		key, err := p.key()
		if err != nil {
			return Overrides{}, "", err
		}
		if err := p.value(key); err != nil {
			return Overrides{}, "", err
		}
		switch {
		case p.at("&&"):
			p.i += 2
		case p.peek() == '}':
			o, err := p.overrides()
			return o, s[p.i+1:], err
		default:
			return Overrides{}, "", errorf(`unclosed "{": the value of %s runs to the end; close the block with "}"`, key)
		}
	}
}

type blockParser struct {
	s      string
	i      int
	keys   []string            // in the order written
	vals   map[string][]string // key → value, or items for list keys
	quoted map[string]bool     // the value of a key (not a list key) was quoted
}

func (p *blockParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *blockParser) at(sep string) bool { return strings.HasPrefix(p.s[p.i:], sep) }

func (p *blockParser) skipBlanks() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// key reads `key:` and checks the key is known and new.
func (p *blockParser) key() (string, error) {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ':' && p.s[p.i] != '}' && !p.at("&&") {
		p.i++
	}
	text := trimBlanks(p.s[start:p.i])
	if p.peek() != ':' {
		if text == "" {
			return "", errorf("empty parameter: write key:value between the && separators")
		}
		return "", errorf("parameter %q has no ':' (write key:value; to use && or } inside a value, quote the value)", text)
	}
	p.i++
	if text == "" {
		return "", errorf("a parameter has an empty key before ':'")
	}
	if !slices.Contains(blockKeys, text) {
		return "", errorf("unknown key %q (known: %s)%s", text, strings.Join(blockKeys, ", "), suggest(text, blockKeys, "", ""))
	}
	if _, dup := p.vals[text]; dup {
		return "", errorf("key %s appears twice", text)
	}
	p.keys = append(p.keys, text)
	return text, nil
}

// value reads the value of key: one item, or items separated by || for
// list keys.
func (p *blockParser) value(key string) error {
	list := listKeys[key]
	var items []string
	for {
		item, quoted, err := p.item(key, list)
		if err != nil {
			return err
		}
		p.quoted[key] = quoted
		if isBlank(item) {
			if list && (len(items) > 0 || p.at("||")) {
				return errorf("%s item %d is empty", key, len(items)+1)
			}
			return errorf("key %s has an empty value", key)
		}
		items = append(items, item)
		if !list || !p.at("||") {
			break
		}
		p.i += 2
	}
	p.vals[key] = items
	return nil
}

// item reads one value or list item, leaving p at the separator or '}'
// that ends it (or at the end of s).
func (p *blockParser) item(key string, list bool) (val string, quoted bool, err error) {
	p.skipBlanks()
	if p.peek() == '"' {
		var rest string
		val, rest, err = unquote(p.s[p.i:], "the value of "+key)
		if err != nil {
			return "", false, err
		}
		p.i = len(p.s) - len(rest)
		p.skipBlanks()
		if p.i < len(p.s) && p.peek() != '}' && !p.at("&&") && !(list && p.at("||")) {
			return "", false, errorf("text after the closing quote of the value of %s (end the value there, or quote all of it)", key)
		}
		return val, true, nil
	}
	start, depth := p.i, 0
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			end := closingQuote(p.s, p.i)
			if end < 0 {
				return "", false, errorf(`unclosed quote in the value of %s: add the closing ", or write \" inside a quoted value`, key)
			}
			p.i = end
		case c == '{':
			depth++
		case c == '}' && depth == 0:
			return trimBlanks(p.s[start:p.i]), false, nil
		case c == '}':
			depth--
		case depth == 0 && (p.at("&&") || list && p.at("||")):
			return trimBlanks(p.s[start:p.i]), false, nil
		}
		p.i++
	}
	return trimBlanks(p.s[start:p.i]), false, nil
}

// closingQuote returns the index of the quote that closes the one at
// s[i], skipping backslash escapes, or -1.
func closingQuote(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// overrides checks the values read and builds the Overrides.
func (p *blockParser) overrides() (Overrides, error) {
	var o Overrides
	one := func(k string) string { return p.vals[k][0] }
	for _, k := range p.keys {
		if !listKeys[k] && !p.quoted[k] && strings.Contains(one(k), "||") {
			return o, errorf("the value of %s contains ||, which separates items only in return and parallel; separate parameters with && (or quote the value)", k)
		}
		switch k {
		case "as":
			if !namePattern.MatchString(one(k)) {
				return o, errorf("as %q is not a name: use 1 to 64 letters, digits, _ or -", one(k))
			}
		case "loop":
			if _, err := loopCount(one(k)); err != nil {
				return o, err
			}
		case "auto":
			if one(k) != "true" {
				return o, errorf("auto takes only true (auto:true), not %q", one(k))
			}
		}
	}
	if v, ok := p.vals["model"]; ok {
		o.Model = v[0]
	}
	if v, ok := p.vals["agent"]; ok {
		o.Agent = v[0]
	}
	if v, ok := p.vals["as"]; ok {
		o.As = v[0]
	}
	o.Return = p.vals["return"]
	o.Parallel = p.vals["parallel"]
	o.Auto = p.vals["auto"] != nil
	_, loop := p.vals["loop"]
	_, until := p.vals["until"]
	_, cmd := p.vals["untilCommand"]
	if loop || until || cmd {
		o.Loop = &Loop{Max: DefaultLoopMax}
		if loop {
			o.Loop.Max, _ = loopCount(one("loop"))
		}
		if until {
			o.Loop.Until = one("until")
		}
		if cmd {
			o.Loop.UntilCommand = one("untilCommand")
		}
	}
	if err := o.check(false); err != nil {
		return Overrides{}, err
	}
	return o, nil
}

// loopCount reads the N of loop:N.
func loopCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strings.TrimLeft(s, "0123456789") != "" {
		hint := ""
		if strings.ContainsAny(s, ",|") {
			hint = " (separate parameters with &&)"
		}
		return 0, errorf("loop must be a whole number ≥ 1, not %q%s", s, hint)
	}
	return n, nil
}
