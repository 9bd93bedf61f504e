package prompt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/taskd/taskd/daemon/prompt"
)

func TestOverrides_Fields(t *testing.T) {
	o, err := prompt.ParseOverrides(`{until:tests pass && loop:5 && model:opus && agent:build && return:review it || /ship && parallel:/a x || /b && as:impl}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(o.Fields())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agent":"build","as":"impl","loop":{"max":5,"until":"tests pass"},"model":"opus","parallel":["/a x","/b"],"return":["review it","/ship"]}`
	if string(got) != want {
		t.Errorf("Fields() as JSON\n got %s\nwant %s", got, want)
	}
	if got := (prompt.Overrides{}).Fields(); len(got) != 0 {
		t.Errorf("zero Overrides: Fields() = %v, want an empty map", got)
	}
	auto, _ := json.Marshal(prompt.Overrides{Auto: true, Loop: nil}.Fields())
	if string(auto) != `{"auto":true}` {
		t.Errorf("auto: Fields() = %s", auto)
	}
	cmd, _ := json.Marshal(prompt.Overrides{Loop: &prompt.Loop{Max: 3, UntilCommand: "make test"}}.Fields())
	if string(cmd) != `{"loop":{"max":3,"untilCommand":"make test"}}` {
		t.Errorf("untilCommand: Fields() = %s", cmd)
	}
}

// Ensure overrides survive Fields, a JSON round trip in both number
// forms, and OverridesFromFields unchanged.
func TestOverridesFromFields_RoundTrip(t *testing.T) {
	for _, tt := range overridesTests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(how string, m map[string]any) {
				t.Helper()
				got, err := prompt.OverridesFromFields(m)
				if err != nil {
					t.Fatalf("%s: OverridesFromFields(%v) error: %v", how, m, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: OverridesFromFields = %#v, want %#v", how, got, tt.want)
				}
			}
			fields := tt.want.Fields()
			check("direct", fields)
			data, err := json.Marshal(fields)
			if err != nil {
				t.Fatal(err)
			}
			var floats map[string]any
			if err := json.Unmarshal(data, &floats); err != nil {
				t.Fatal(err)
			}
			check("float64 numbers", floats)
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var numbers map[string]any
			if err := dec.Decode(&numbers); err != nil {
				t.Fatal(err)
			}
			check("json.Number numbers", numbers)
		})
	}
}

// orderedObject stands for a JSON object type such as taskfile.Object.
type orderedObject struct {
	keys []string
	vals map[string]any
}

func (o *orderedObject) Keys() []string             { return o.keys }
func (o *orderedObject) Get(key string) (any, bool) { v, ok := o.vals[key]; return v, ok }

func TestOverridesFromFields(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want prompt.Overrides
	}{
		{"other keys are not read", map[string]any{"prompt": "x", "state": "running", "cwd": 7}, prompt.Overrides{}},
		{"nulls are unset", map[string]any{"model": nil, "loop": nil, "return": nil, "auto": nil}, prompt.Overrides{}},
		{"empty values are unset", map[string]any{"model": "", "return": []any{}, "auto": false}, prompt.Overrides{}},
		{"loop object type", map[string]any{"loop": &orderedObject{[]string{"until", "max"}, map[string]any{"until": "done", "max": json.Number("4")}}},
			prompt.Overrides{Loop: &prompt.Loop{Max: 4, Until: "done"}}},
		{"loop max defaults with until", map[string]any{"loop": map[string]any{"until": "done"}}, prompt.Overrides{Loop: &prompt.Loop{Max: 10, Until: "done"}}},
		{"loop max as whole float", map[string]any{"loop": map[string]any{"max": 3.0}}, prompt.Overrides{Loop: &prompt.Loop{Max: 3}}},
		{"loop max as int64", map[string]any{"loop": map[string]any{"max": int64(3)}}, prompt.Overrides{Loop: &prompt.Loop{Max: 3}}},
		{"return as []string", map[string]any{"return": []string{"a"}}, prompt.Overrides{Return: []string{"a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.OverridesFromFields(tt.in)
			if err != nil {
				t.Fatalf("OverridesFromFields(%v) error: %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("OverridesFromFields(%v) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestOverridesFromFields_Errors(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"max a string", map[string]any{"loop": map[string]any{"max": "5"}}, `metadata.taskd.loop.max must be a whole number ≥ 1 (it is the string "5")`},
		{"max zero", map[string]any{"loop": map[string]any{"max": json.Number("0")}}, `metadata.taskd.loop.max must be a whole number ≥ 1 (it is 0)`},
		{"max fraction", map[string]any{"loop": map[string]any{"max": 1.5}}, `metadata.taskd.loop.max must be a whole number ≥ 1 (it is 1.5)`},
		{"max fraction json", map[string]any{"loop": map[string]any{"max": json.Number("2.5")}}, `metadata.taskd.loop.max must be a whole number ≥ 1 (it is 2.5)`},
		{"loop a number", map[string]any{"loop": 5.0}, `metadata.taskd.loop must be an object such as {"max": 5, "until": "the tests pass"} (it is 5)`},
		{"loop empty", map[string]any{"loop": map[string]any{}}, `metadata.taskd.loop needs max, until or untilCommand, as in {"max": 5}`},
		{"loop unknown key", map[string]any{"loop": map[string]any{"max": 2, "maxx": 3}}, `metadata.taskd.loop.maxx is not a loop field (known: max, until, untilCommand)`},
		{"until not a string", map[string]any{"loop": map[string]any{"until": true}}, `metadata.taskd.loop.until must be a string (it is true)`},
		{"blank until", map[string]any{"loop": map[string]any{"until": " \t"}}, `metadata.taskd.loop.until is blank`},
		{"both untils", map[string]any{"loop": map[string]any{"until": "a", "untilCommand": "b"}},
			`metadata.taskd.loop.until and metadata.taskd.loop.untilCommand cannot both be set: a loop ends either on a judge's verdict or on a command's exit status`},
		{"return a string", map[string]any{"return": "review"}, `metadata.taskd.return must be an array of strings such as ["run the tests", "/review src"] (it is the string "review")`},
		{"return with a number", map[string]any{"return": []any{"a", 1.0}}, `metadata.taskd.return must be an array of strings such as ["run the tests", "/review src"] (it is an array)`},
		{"return with an empty item", map[string]any{"return": []any{"a", " "}}, `metadata.taskd.return item 2 is empty`},
		{"parallel an object", map[string]any{"parallel": map[string]any{}}, `metadata.taskd.parallel must be an array of strings such as ["run the tests", "/review src"] (it is an object)`},
		{"model a number", map[string]any{"model": 4.0}, `metadata.taskd.model must be a string (it is 4)`},
		{"model with a blank", map[string]any{"model": "claude opus"}, `metadata.taskd.model "claude opus" must be a single name, without blanks or commas`},
		{"agent an array", map[string]any{"agent": []any{"a"}}, `metadata.taskd.agent must be a string (it is an array)`},
		{"as not a name", map[string]any{"as": "a/b"}, `metadata.taskd.as "a/b" is not a name: use 1 to 64 letters, digits, _ or -`},
		{"auto a string", map[string]any{"auto": "true"}, `metadata.taskd.auto must be true or false (it is the string "true")`},
		{"not UTF-8", map[string]any{"return": []any{"a\xc3"}}, "metadata.taskd.return: invalid UTF-8 (byte 0xc3); write the text as UTF-8"},
		{"auto with return", map[string]any{"auto": true, "return": []any{"x"}}, `metadata.taskd.auto cannot be combined with metadata.taskd.return: the planner writes the whole workflow`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := prompt.OverridesFromFields(tt.in)
			var pe *prompt.Error
			if !errors.As(err, &pe) {
				t.Fatalf("OverridesFromFields(%v) error = %v, want a *prompt.Error", tt.in, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("OverridesFromFields(%v) error\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestMergeOverrides(t *testing.T) {
	base := prompt.Overrides{Model: "sonnet", Agent: "build", Loop: &prompt.Loop{Max: 5, Until: "tests pass"},
		Return: []string{"review"}, Parallel: []string{"/a"}}
	tests := []struct {
		name string
		top  prompt.Overrides
		want prompt.Overrides
	}{
		{"nothing on top", prompt.Overrides{}, base},
		{"inline model wins", prompt.Overrides{Model: "opus"},
			prompt.Overrides{Model: "opus", Agent: "build", Loop: &prompt.Loop{Max: 5, Until: "tests pass"}, Return: []string{"review"}, Parallel: []string{"/a"}}},
		{"a loop replaces the whole loop", prompt.Overrides{Loop: &prompt.Loop{Max: 2}},
			prompt.Overrides{Model: "sonnet", Agent: "build", Loop: &prompt.Loop{Max: 2}, Return: []string{"review"}, Parallel: []string{"/a"}}},
		{"returns replace returns", prompt.Overrides{Return: []string{"x", "y"}, As: "r"},
			prompt.Overrides{Model: "sonnet", Agent: "build", Loop: &prompt.Loop{Max: 5, Until: "tests pass"}, Return: []string{"x", "y"}, Parallel: []string{"/a"}, As: "r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.MergeOverrides(base, tt.top)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("MergeOverrides = %#v, want %#v", got, tt.want)
			}
			if got.Loop == base.Loop || got.Loop == tt.top.Loop {
				t.Errorf("MergeOverrides shares a *Loop with its arguments")
			}
		})
	}
	_, err := prompt.MergeOverrides(base, prompt.Overrides{Auto: true})
	if got, want := err.Error(), "auto cannot be combined with loop, return or parallel: the planner writes the whole workflow"; got != want {
		t.Errorf("auto over returns: error\n got %s\nwant %s", got, want)
	}
}
