package prompt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/prompt"
)

// The fuzz targets check, on any input, that nothing panics, that every
// failure is a *prompt.Error (with a line in range where the input has
// lines), and that whatever is accepted renders to text that parses back
// to an equal value and renders the same again. Seed corpora are in
// testdata/fuzz/<target>; run a target longer with, for example,
//
//	go test -fuzz=FuzzParse -fuzztime=5m ./daemon/prompt

func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := prompt.Parse(text, userCommands)
		if err != nil {
			checkError(t, err, strings.Count(text, "\n")+1)
			return
		}
		out := s.String()
		again, err := prompt.Parse(out, userCommands)
		if err != nil {
			t.Fatalf("Parse(%q) = %s; its String %q does not parse: %v", text, dump(s), out, err)
		}
		if !reflect.DeepEqual(withoutLines(again), withoutLines(s)) {
			t.Fatalf("Parse(%q) =\n%s String %q parses to\n%s", text, dump(s), out, dump(again))
		}
		if out2 := again.String(); out2 != out {
			t.Fatalf("String not stable: %q then %q", out, out2)
		}
		// The prompts of /push lines are scripts of their own.
		for _, st := range append(s.Leading, s.Trailing...) {
			if p, ok := st.Cmd.(*prompt.Push); ok {
				if _, err := prompt.Parse(p.Prompt, prompt.ParseOptions{}); err != nil {
					checkError(t, err, strings.Count(p.Prompt, "\n")+1)
				}
			}
		}
		// References to results either all substitute or fail alike.
		names, nerr := prompt.ResultNames(s.Content)
		got, serr := prompt.SubstituteResults(s.Content, func(name string) (string, bool) { return "<" + name + ">", true })
		if (nerr == nil) != (serr == nil) {
			t.Fatalf("ResultNames error %v but SubstituteResults error %v", nerr, serr)
		}
		if serr == nil && len(names) == 0 && got != s.Content {
			t.Fatalf("SubstituteResults changed %q without references: %q", s.Content, got)
		}
		if _, err := prompt.ParseAutoOutput(text, userCommands); err != nil {
			checkError(t, err, strings.Count(text, "\n")+1)
		}
	})
}

func FuzzParseOverrides(f *testing.F) {
	for _, tt := range overridesTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, block string) {
		o, err := prompt.ParseOverrides(block)
		if err != nil {
			checkError(t, err, 0)
			return
		}
		out := o.String()
		again, err := prompt.ParseOverrides(out)
		if err != nil {
			t.Fatalf("ParseOverrides(%q) = %#v; its String %q does not parse: %v", block, o, out, err)
		}
		if !reflect.DeepEqual(again, o) {
			t.Fatalf("ParseOverrides(%q) = %#v; String %q parses to %#v", block, o, out, again)
		}
		if out2 := again.String(); out2 != out {
			t.Fatalf("String not stable: %q then %q", out, out2)
		}
		data, err := json.Marshal(o.Fields())
		if err != nil {
			t.Fatalf("Fields of %#v do not encode: %v", o, err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		back, err := prompt.OverridesFromFields(m)
		if err != nil {
			t.Fatalf("OverridesFromFields(%s) error: %v", data, err)
		}
		if !reflect.DeepEqual(back, o) {
			t.Fatalf("ParseOverrides(%q) = %#v; through fields %s it is %#v", block, o, data, back)
		}
		// The same block on a /subtask line gives the same overrides.
		if !strings.ContainsAny(block, "\n\r") {
			s, err := prompt.Parse("/subtask "+block+" go", prompt.ParseOptions{})
			if err != nil {
				t.Fatalf("ParseOverrides accepts %q, /subtask does not: %v", block, err)
			}
			if got := s.Leading[0].Cmd.(*prompt.Subtask).Overrides; !reflect.DeepEqual(got, o) {
				t.Fatalf("/subtask %s has overrides %#v, want %#v", block, got, o)
			}
		}
	})
}

func FuzzParseCommandFile(f *testing.F) {
	for _, tt := range commandFileTests {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := prompt.ParseCommandFile("cmd", data)
		if err != nil {
			checkError(t, err, bytes.Count(data, []byte("\n"))+1)
			return
		}
		if isBlankString(c.Body) {
			t.Fatalf("ParseCommandFile(%q) accepted an empty body", data)
		}
		out := c.String()
		again, err := prompt.ParseCommandFile("cmd", []byte(out))
		if err != nil {
			t.Fatalf("ParseCommandFile(%q) = %#v; its String %q does not parse: %v", data, c, out, err)
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("ParseCommandFile(%q) = %#v; String %q parses to %#v", data, c, out, again)
		}
		if out2 := again.String(); out2 != out {
			t.Fatalf("String not stable: %q then %q", out, out2)
		}
		if _, err := prompt.MergeOverrides(c.Overrides, prompt.Overrides{}); err != nil {
			t.Fatalf("frontmatter overrides %#v fail their own checks: %v", c.Overrides, err)
		}
		_ = c.Expand("x y")
	})
}

// checkError fails t unless err is a *prompt.Error whose line is in
// 1..lines (or 0 when lines is 0, or when the error is about no line).
func checkError(t *testing.T, err error, lines int) {
	t.Helper()
	var pe *prompt.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *prompt.Error", err, err)
	}
	if pe.Msg == "" {
		t.Fatalf("error %#v has no message", pe)
	}
	if pe.Line < 0 || pe.Line > lines {
		t.Fatalf("error %q is on line %d of %d", err, pe.Line, lines)
	}
}

func isBlankString(s string) bool { return strings.TrimSpace(s) == "" }
