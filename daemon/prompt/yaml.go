package prompt

import (
	"regexp"
	"strings"
)

// A strict parser for the part of YAML that command-file frontmatter uses:
//
//	key: scalar            plain, 'single-quoted' or "double-quoted" (\\ \" \n \t \r)
//	key: [a, "b"]          flow list of scalars, closed on its line
//	key: {k: v, k: v}      flow mapping of scalars, closed on its line
//	key:                   block list of scalars or of one-level mappings,
//	  - item                 indented or at the key's own indentation
//	  - k: v
//	    k: v
//	key:                   block mapping of scalars, indented
//	  k: v
//	# comment              whole-line, or after a value and a blank
//
// Everything else (multi-line values, anchors, tags, deeper nesting, tabs
// for indentation) is an *Error naming the line.

type ykind int

const (
	yNull ykind = iota
	yScalar
	yList
	yMap
)

// ynode is a parsed value.
type ynode struct {
	kind   ykind
	line   int      // 1-based line in the file
	text   string   // that line, for errors
	val    string   // yScalar
	quoted bool     // yScalar written in quotes
	items  []*ynode // yList
	keys   []string // yMap, in the order written
	vals   []*ynode // yMap
	index  map[string]int
}

// yline is one significant line (not blank, not a comment).
type yline struct {
	n      int    // 1-based line in the file
	indent int    // leading spaces
	body   string // after the indentation, trailing blanks removed
	text   string // the whole line, trailing blanks removed
}

type yparser struct {
	lines []yline
	i     int
}

var yamlKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*:( |$)`)

// parseYAML parses frontmatter lines; first is the file line of lines[0].
// The result is a mapping (empty when there are no lines).
func parseYAML(lines []string, first int) (*ynode, error) {
	p := &yparser{}
	for i, l := range lines {
		text := cmdText(l)
		body := strings.TrimLeft(text, " ")
		if body == "" || body[0] == '#' {
			continue
		}
		if body[0] == '\t' {
			return nil, &Error{Line: first + i, Text: text, Msg: "a tab indents this line; indent with spaces"}
		}
		p.lines = append(p.lines, yline{first + i, len(text) - len(body), body, text})
	}
	m, err := p.mapping(0, true)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.lines) {
		return nil, p.errAt(p.lines[p.i], "unexpected indentation (a value must fit on its line, and nesting goes one level deep)")
	}
	return m, nil
}

func (p *yparser) errAt(l yline, format string, args ...any) *Error {
	e := errorf(format, args...)
	e.Line, e.Text = l.n, l.text
	return e
}

// mapping parses `key: value` lines at exactly indent. Values of the top
// mapping may be lists and mappings; values of a nested one are scalars.
func (p *yparser) mapping(indent int, top bool) (*ynode, error) {
	m := &ynode{kind: yMap}
	if p.i < len(p.lines) {
		m.line, m.text = p.lines[p.i].n, p.lines[p.i].text
	}
	for p.i < len(p.lines) && p.lines[p.i].indent == indent {
		l := p.lines[p.i]
		if !yamlKey.MatchString(l.body) {
			return nil, p.errAt(l, "expected key: value (keys are plain words; quote values that contain \": \")")
		}
		key, rest, _ := strings.Cut(l.body, ":")
		p.i++
		rest = trimBlanks(rest)
		var v *ynode
		var err error
		if rest == "" || rest[0] == '#' {
			v, err = p.block(l, indent, top)
		} else {
			v, err = p.inline(l, rest, top, top)
		}
		if err != nil {
			return nil, err
		}
		if !m.add(key, v) {
			return nil, p.errAt(l, "key %s appears twice", key)
		}
	}
	return m, nil
}

// block parses what follows a key with nothing after its colon: a block
// list, a block mapping (top level only), or nothing at all (null).
func (p *yparser) block(l yline, indent int, top bool) (*ynode, error) {
	null := &ynode{kind: yNull, line: l.n, text: l.text}
	if !top || p.i == len(p.lines) {
		return null, nil
	}
	next := p.lines[p.i]
	switch {
	case isDash(next.body) && next.indent >= indent:
		return p.list(next.indent)
	case next.indent > indent:
		return p.mapping(next.indent, false)
	}
	return null, nil
}

func isDash(body string) bool { return body == "-" || strings.HasPrefix(body, "- ") }

// list parses `- item` lines at exactly indent. An item is a scalar, a
// flow mapping, or a mapping whose further keys sit under its first.
func (p *yparser) list(indent int) (*ynode, error) {
	n := &ynode{kind: yList, line: p.lines[p.i].n, text: p.lines[p.i].text}
	for p.i < len(p.lines) && p.lines[p.i].indent == indent && isDash(p.lines[p.i].body) {
		l := p.lines[p.i]
		p.i++
		item := strings.TrimLeft(l.body[1:], " ")
		if item == "" || item[0] == '#' {
			return nil, p.errAt(l, "empty list item (items go on the line of their -)")
		}
		if !yamlKey.MatchString(item) {
			v, err := p.inline(l, item, false, true)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
			continue
		}
		// A mapping item: `- key: v`, then `key: v` lines under the first key.
		col := indent + len(l.body) - len(item)
		m := &ynode{kind: yMap, line: l.n, text: l.text}
		for first := true; first || p.i < len(p.lines) && p.lines[p.i].indent == col && !isDash(p.lines[p.i].body); first = false {
			kl, body := l, item
			if !first {
				kl, body = p.lines[p.i], p.lines[p.i].body
				p.i++
				if !yamlKey.MatchString(body) {
					return nil, p.errAt(kl, "expected key: value")
				}
			}
			key, rest, _ := strings.Cut(body, ":")
			v := &ynode{kind: yNull, line: kl.n, text: kl.text}
			if rest = trimBlanks(rest); rest != "" && rest[0] != '#' {
				var err error
				if v, err = p.inline(kl, rest, false, false); err != nil {
					return nil, err
				}
			}
			if !m.add(key, v) {
				return nil, p.errAt(kl, "key %s appears twice", key)
			}
		}
		n.items = append(n.items, m)
	}
	return n, nil
}

// add adds key to the mapping m, unless m has it already.
func (m *ynode) add(key string, v *ynode) bool {
	if m.index == nil {
		m.index = map[string]int{}
	}
	if _, dup := m.index[key]; dup {
		return false
	}
	m.index[key] = len(m.keys)
	m.keys, m.vals = append(m.keys, key), append(m.vals, v)
	return true
}

// inline parses a value written on its key's line: a scalar, or (where
// allowed) a flow list or a flow mapping.
func (p *yparser) inline(l yline, s string, flowList, flowMap bool) (*ynode, error) {
	n := &ynode{kind: yScalar, line: l.n, text: l.text}
	var rest string
	var err error
	switch c := s[0]; {
	case c == '"' || c == '\'':
		n.quoted = true
		if n.val, rest, err = yquoted(s); err != nil {
			return nil, p.errAt(l, "%s", err.(*Error).Msg)
		}
	case c == '[' && flowList:
		n.kind = yList
		n.items, rest, err = p.flow(l, s)
	case c == '{' && flowMap:
		n.kind = yMap
		n.keys, n.vals, rest, err = p.flowMap(l, s)
	case strings.IndexByte("[]{},&*!|>%@`", c) >= 0 || strings.IndexByte("-?:", c) >= 0 && (len(s) == 1 || s[1] == ' '):
		return nil, p.errAt(l, "a value cannot start with %q here (this parser reads only plain, quoted and one-line list values); quote the value", c)
	default:
		return p.plain(l, plainEnd(s))
	}
	if err != nil {
		return nil, err
	}
	if r := trimBlanks(rest); r != "" && (r[0] != '#' || r == rest) {
		return nil, p.errAt(l, "unexpected text after the value: %q", clip(r, 30))
	}
	return n, nil
}

// plainEnd returns a plain scalar without its trailing comment and blanks.
func plainEnd(s string) string {
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			s = s[:i]
			break
		}
	}
	return trimBlanks(s)
}
