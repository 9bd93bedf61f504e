package prompt_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/taskd/taskd/daemon/prompt"
)

func TestResultNames(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"no references", nil},
		{"$RESULT alone and $RESULTS[x] are text", nil},
		{"Compare $RESULT[plan-a] with $RESULT[plan_b].\nPrefer $RESULT[plan-a].", []string{"plan-a", "plan_b"}},
		{"$RESULT[a]$RESULT[b]", []string{"a", "b"}},
		{"$$RESULT[a]]", []string{"a"}},
	}
	for _, tt := range tests {
		got, err := prompt.ResultNames(tt.in)
		if err != nil {
			t.Errorf("ResultNames(%q) error: %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ResultNames(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSubstituteResults(t *testing.T) {
	results := map[string]string{"plan-a": "A: use JWT", "b": "$RESULT[plan-a] (literally)", "empty": ""}
	lookup := func(name string) (string, bool) { v, ok := results[name]; return v, ok }
	tests := []struct{ in, want string }{
		{"nothing to do", "nothing to do"},
		{"Plan: $RESULT[plan-a].", "Plan: A: use JWT."},
		{"$RESULT[plan-a]$RESULT[plan-a]", "A: use JWTA: use JWT"},
		{"not scanned again: $RESULT[b]", "not scanned again: $RESULT[plan-a] (literally)"},
		{"[$RESULT[empty]]", "[]"},
		{"multi\nline $RESULT[b]\nend", "multi\nline $RESULT[plan-a] (literally)\nend"},
	}
	for _, tt := range tests {
		got, err := prompt.SubstituteResults(tt.in, lookup)
		if err != nil {
			t.Errorf("SubstituteResults(%q) error: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("SubstituteResults(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The daemon may ask for placeholders instead of errors.
	placeholder := func(name string) (string, bool) {
		if v, ok := results[name]; ok {
			return v, true
		}
		return "[Result '" + name + "' not found]", true
	}
	if got, _ := prompt.SubstituteResults("$RESULT[x] and $RESULT[plan-a]", placeholder); got != "[Result 'x' not found] and A: use JWT" {
		t.Errorf("with placeholders: %q", got)
	}
}

func TestSubstituteResults_Errors(t *testing.T) {
	lookup := func(name string) (string, bool) { return "v", name == "known" }
	tests := []struct{ in, want string }{
		{"a\nuse $RESULT[missing] here", `line 2: "$RESULT[missing]": no result is named "missing"; a result gets its name from as:NAME or /push name=NAME`},
		{"$RESULT[known] $RESULT[x]\n$RESULT[y] $RESULT[x] $RESULT[z]", `line 1: "$RESULT[x]": no results are named "x", "y" or "z"; a result gets its name from as:NAME or /push name=NAME`},
		{"one\ntwo $RESULT[no end", `line 2: "$RESULT[no end": $RESULT[ is not closed with ] on its line; write $RESULT[name]`},
		{"$RESULT[split\n]", `line 1: "$RESULT[split\n]": $RESULT[ is not closed with ] on its line; write $RESULT[name]`},
		{"$RESULT[]", `line 1: "$RESULT[]": not a result name: use the name given with as:NAME or /push name=NAME (1 to 64 letters, digits, _ or -)`},
		{"$RESULT[two words]", `line 1: "$RESULT[two words]": not a result name: use the name given with as:NAME or /push name=NAME (1 to 64 letters, digits, _ or -)`},
	}
	for _, tt := range tests {
		_, err := prompt.SubstituteResults(tt.in, lookup)
		var pe *prompt.Error
		if !errors.As(err, &pe) {
			t.Errorf("SubstituteResults(%q) error = %v, want a *prompt.Error", tt.in, err)
			continue
		}
		if got := err.Error(); got != tt.want {
			t.Errorf("SubstituteResults(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
	if _, err := prompt.SubstituteResults("$RESULT[a]", nil); err == nil {
		t.Error("SubstituteResults with a nil lookup accepted a reference")
	}
	if _, err := prompt.ResultNames("x $RESULT[a b]"); err == nil {
		t.Error("ResultNames accepted a malformed reference")
	}
}
