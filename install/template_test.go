package install

import (
	"strings"
	"testing"
)

var templateTests = []struct {
	name, src, want, err string
}{
	{name: "text", src: "plain", want: "plain"},
	{name: "value", src: "a={{A}}.", want: "a=x y."},
	{name: "spaces", src: "{{ A }}", want: "x y"},
	{name: "pipe", src: "{{A | up | esc}}", want: `X\x20Y`},
	{name: "if", src: "{{if A}}yes{{end}}{{if E}}no{{end}}", want: "yes"},
	{name: "else", src: "{{if E}}no{{else}}yes {{A}}{{end}}", want: "yes x y"},
	{name: "if list", src: "{{if L}}L{{end}}{{if N}}N{{end}}", want: "L"},
	{name: "range", src: "{{range L}}[{{.}}|{{. | up}}|{{A}}]{{end}}", want: "[a|A|x y][b|B|x y]"},
	{name: "range nil", src: "<{{range N}}{{.}}{{end}}>", want: "<>"},
	{name: "nested", src: "{{range L}}{{if A}}{{.}}{{end}}{{end}}", want: "ab"},
	{name: "unknown key", src: "{{.Name}}", err: `unknown key ".Name"`},
	{name: "unknown func", src: "{{A | nope}}", err: `unknown function "nope"`},
	{name: "list as value", src: "{{L}}", err: "not a string"},
	{name: "string as list", src: "{{range A}}{{end}}", err: "not a list"},
	{name: "missing end", src: "{{if A}}x", err: "missing {{end}}"},
	{name: "stray end", src: "x{{end}}", err: "unexpected {{end}}"},
	{name: "unclosed", src: "{{A", err: "unclosed"},
	{name: "trim", src: "{{- A}}", err: "trim markers"},
	{name: "old syntax", src: "{{if and .A .B}}{{end}}", err: `unknown key "and .A .B"`},
}

// Ensure the evaluator follows kardianos/service v1.3.0's template rules.
func TestRenderTemplate(t *testing.T) {
	data := map[string]tmplValue{"A": "x y", "E": "", "L": []string{"a", "b"}, "N": []string(nil)}
	funcs := tmplFuncs{"up": strings.ToUpper, "esc": systemdFuncs["cmdEscape"]}
	for _, tt := range templateTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderTemplate(tt.src, data, funcs)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("renderTemplate(%q) = %q, %v; want error %q", tt.src, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("renderTemplate(%q) = %q, %v; want %q", tt.src, got, err, tt.want)
			}
		})
	}
}
