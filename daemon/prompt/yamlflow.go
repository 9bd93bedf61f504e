package prompt

import (
	"strings"
)

// The one-line pieces of the YAML subset: quoted scalars, plain scalars,
// and flow lists and mappings of scalars.

// plain makes a node of a plain scalar, refusing what YAML would read as
// something else.
func (p *yparser) plain(l yline, val string) (*ynode, error) {
	if strings.Contains(val, ": ") || strings.HasSuffix(val, ":") {
		return nil, p.errAt(l, "a plain value cannot contain \": \" or end with \":\"; quote the value")
	}
	n := &ynode{kind: yScalar, line: l.n, text: l.text, val: val}
	switch val {
	case "~", "null", "Null", "NULL":
		n.kind, n.val = yNull, ""
	}
	return n, nil
}

// yquoted reads the quoted scalar at the start of s and returns its value
// and what follows it. Double quotes decode \\ \" \n \t \r; in single
// quotes a doubled single quote stands for one.
func yquoted(s string) (val, rest string, err error) {
	var b strings.Builder
	q := s[0]
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == q:
			return b.String(), s[i+1:], nil
		case c == '\\' && q == '"':
			if i+1 == len(s) {
				return "", "", errorf("unclosed quote: a quoted value must end on its line")
			}
			i++
			switch s[i] {
			case '\\', '"':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				return "", "", errorf(`unsupported escape \%s in a quoted value (supported: \\, \", \n, \t, \r)`, clipEscape(s[i:]))
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errorf("unclosed quote: a quoted value must end on its line")
}

// yquote renders s as a double-quoted scalar that yquoted reads back.
func yquote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

// flow parses a flow list of scalars, s[0] being '['.
func (p *yparser) flow(l yline, s string) ([]*ynode, string, error) {
	var items []*ynode
	for i := 1; ; {
		i = skipBlanks(s, i)
		if i < len(s) && s[i] == ']' && len(items) == 0 {
			return nil, s[i+1:], nil
		}
		v, n, err := p.flowScalar(l, s[i:], ']')
		if err != nil {
			return nil, "", err
		}
		items = append(items, v)
		if i = skipBlanks(s, i+n); i == len(s) {
			return nil, "", p.errAt(l, "a flow list must close on its line with ]")
		}
		switch s[i] {
		case ']':
			return items, s[i+1:], nil
		case ',':
			i++
		default:
			return nil, "", p.errAt(l, "expected , or ] in the flow list")
		}
	}
}

// flowMap parses a flow mapping of scalars, s[0] being '{'.
func (p *yparser) flowMap(l yline, s string) (keys []string, vals []*ynode, rest string, err error) {
	seen := map[string]bool{}
	for i := 1; ; {
		i = skipBlanks(s, i)
		if i < len(s) && s[i] == '}' && len(keys) == 0 {
			return nil, nil, s[i+1:], nil
		}
		colon := strings.IndexByte(s[i:], ':')
		if colon < 0 || !yamlKey.MatchString(s[i:i+colon+1]+" ") || i+colon+1 < len(s) && s[i+colon+1] != ' ' {
			return nil, nil, "", p.errAt(l, "expected key: value in the flow mapping")
		}
		key := s[i : i+colon]
		if seen[key] {
			return nil, nil, "", p.errAt(l, "key %s appears twice", key)
		}
		seen[key] = true
		v := &ynode{kind: yNull, line: l.n, text: l.text}
		i = skipBlanks(s, i+colon+1)
		if i < len(s) && s[i] != ',' && s[i] != '}' {
			var n int
			if v, n, err = p.flowScalar(l, s[i:], '}'); err != nil {
				return nil, nil, "", err
			}
			i = skipBlanks(s, i+n)
		}
		keys, vals = append(keys, key), append(vals, v)
		if i == len(s) {
			return nil, nil, "", p.errAt(l, "a flow mapping must close on its line with }")
		}
		switch s[i] {
		case '}':
			return keys, vals, s[i+1:], nil
		case ',':
			i++
		default:
			return nil, nil, "", p.errAt(l, "expected , or } in the flow mapping")
		}
	}
}

// flowScalar reads one scalar inside a flow collection that closes with
// end, and returns it with the number of bytes it took.
func (p *yparser) flowScalar(l yline, s string, end byte) (*ynode, int, error) {
	if s == "" {
		return nil, 0, p.errAt(l, "a flow collection must close on its line")
	}
	if s[0] == '"' || s[0] == '\'' {
		val, rest, err := yquoted(s)
		if err != nil {
			return nil, 0, p.errAt(l, "%s", err.(*Error).Msg)
		}
		return &ynode{kind: yScalar, line: l.n, text: l.text, val: val, quoted: true}, len(s) - len(rest), nil
	}
	i := 0
	for ; i < len(s) && s[i] != ',' && s[i] != end; i++ {
		switch {
		case strings.IndexByte("[]{}", s[i]) >= 0:
			return nil, 0, p.errAt(l, "nested or unclosed brackets in a flow collection; quote the value or use a block list")
		case s[i] == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return nil, 0, p.errAt(l, "a comment inside a flow collection; close it before the comment")
		}
	}
	val := trimBlanks(s[:i])
	if val == "" {
		return nil, 0, p.errAt(l, "empty item in a flow collection")
	}
	if strings.IndexByte("&*!|>%@`", val[0]) >= 0 || strings.IndexByte("-?:", val[0]) >= 0 && (len(val) == 1 || val[1] == ' ') {
		return nil, 0, p.errAt(l, "a value cannot start with %q (this parser reads only plain and quoted values); quote the value", val[0])
	}
	n, err := p.plain(l, val)
	return n, i, err
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}
