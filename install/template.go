package install

import (
	"fmt"
	"strings"
)

// This file renders taskd's unit and plist templates without a service
// manager. The templates are handed to github.com/kardianos/service, which
// renders them itself at install time with its own small engine (v1.3.0 and
// later: {{Key}}, {{Key | fn}}, {{if Key}}…{{else}}…{{end}},
// {{range Key}}…{{.}}…{{end}}). That engine is not exported, so the same
// subset is evaluated here, with the same values and the same functions, so
// that Render and --dry-run show exactly the file install writes. A test on
// Linux installs through kardianos with a stand-in systemctl and compares
// the file it wrote with Render's.
//
// Whitespace-trimming markers ({{- and -}}) are not supported; taskd's
// templates do not use them, and a template that does is rejected.

// tmplValue is a template value: a string or a []string.
type tmplValue = any

// tmplFuncs are the pipeline functions a template may use.
type tmplFuncs map[string]func(string) string

// renderTemplate renders src with data and funcs. It fails on a malformed
// template, an unknown key or function, or a key of the wrong kind, as
// kardianos's engine does.
func renderTemplate(src string, data map[string]tmplValue, funcs tmplFuncs) (string, error) {
	nodes, rest, term, err := parseTmpl(src, false)
	if err != nil {
		return "", err
	}
	if term != "" || rest != "" {
		return "", fmt.Errorf("template: unexpected {{%s}}", term)
	}
	var b strings.Builder
	if err := execTmpl(&b, nodes, data, nil, funcs); err != nil {
		return "", err
	}
	return b.String(), nil
}

type tmplNode struct {
	kind  string // "text", "value", "if", "range"
	text  string // literal text, or the key
	funcs []string
	body  []tmplNode
	alt   []tmplNode
}

// parseTmpl parses src up to the end, or (inBlock) up to {{else}} or {{end}},
// which it returns as term with the unparsed rest.
func parseTmpl(src string, inBlock bool) (nodes []tmplNode, rest, term string, err error) {
	for {
		open := strings.Index(src, "{{")
		if open < 0 {
			if src != "" {
				nodes = append(nodes, tmplNode{kind: "text", text: src})
			}
			if inBlock {
				return nil, "", "", fmt.Errorf("template: missing {{end}}")
			}
			return nodes, "", "", nil
		}
		if open > 0 {
			nodes = append(nodes, tmplNode{kind: "text", text: src[:open]})
		}
		end := strings.Index(src[open:], "}}")
		if end < 0 {
			return nil, "", "", fmt.Errorf("template: unclosed {{")
		}
		action := src[open+2 : open+end]
		src = src[open+end+2:]
		if strings.HasPrefix(action, "-") || strings.HasSuffix(action, "-") {
			return nil, "", "", fmt.Errorf("template: trim markers are not supported: {{%s}}", action)
		}
		action = strings.TrimSpace(action)
		kw, arg, _ := strings.Cut(action, " ")
		arg = strings.TrimSpace(arg)
		switch kw {
		case "end", "else":
			if !inBlock {
				return nil, "", "", fmt.Errorf("template: unexpected {{%s}}", kw)
			}
			return nodes, src, kw, nil
		case "if", "range":
			if arg == "" {
				return nil, "", "", fmt.Errorf("template: {{%s}} needs a key", kw)
			}
			n := tmplNode{kind: kw, text: arg}
			var t string
			if n.body, src, t, err = parseTmpl(src, true); err != nil {
				return nil, "", "", err
			}
			if t == "else" {
				if kw == "range" {
					return nil, "", "", fmt.Errorf("template: {{else}} in {{range}}")
				}
				if n.alt, src, t, err = parseTmpl(src, true); err != nil {
					return nil, "", "", err
				}
				if t != "end" {
					return nil, "", "", fmt.Errorf("template: second {{else}}")
				}
			}
			nodes = append(nodes, n)
		default:
			parts := strings.Split(action, "|")
			n := tmplNode{kind: "value", text: strings.TrimSpace(parts[0])}
			for _, p := range parts[1:] {
				n.funcs = append(n.funcs, strings.TrimSpace(p))
			}
			nodes = append(nodes, n)
		}
	}
}

func execTmpl(b *strings.Builder, nodes []tmplNode, data map[string]tmplValue, dot tmplValue, funcs tmplFuncs) error {
	for _, n := range nodes {
		if n.kind == "text" {
			b.WriteString(n.text)
			continue
		}
		v := dot
		if n.text != "." {
			var ok bool
			if v, ok = data[n.text]; !ok {
				return fmt.Errorf("template: unknown key %q", n.text)
			}
		}
		switch n.kind {
		case "value":
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("template: key %q is not a string", n.text)
			}
			for _, name := range n.funcs {
				fn, ok := funcs[name]
				if !ok {
					return fmt.Errorf("template: unknown function %q", name)
				}
				s = fn(s)
			}
			b.WriteString(s)
		case "if":
			body := n.alt
			if s, ok := v.(string); ok && s != "" {
				body = n.body
			} else if l, ok := v.([]string); ok && len(l) > 0 {
				body = n.body
			}
			if err := execTmpl(b, body, data, dot, funcs); err != nil {
				return err
			}
		case "range":
			items, ok := v.([]string)
			if !ok {
				return fmt.Errorf("template: key %q is not a list", n.text)
			}
			for _, item := range items {
				if err := execTmpl(b, n.body, data, item, funcs); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
