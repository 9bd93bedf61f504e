package taskfile_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

func TestParseValue_Errors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "line 1, column 1: unexpected end of file, expected a value"},
		{"trailing comma", `{"a": 1,}`, `line 1, column 9: unexpected '}', expected a quoted key`},
		{"duplicate key", "{\"a\": 1,\n \"a\": 2}", `line 2, column 2: key "a" appears twice in one object`},
		{"two values", `{} {}`, `line 1, column 4: unexpected '{' after the end of the JSON value`},
		{"bad literal", `{"a": tru}`, `line 1, column 7: invalid literal, expected "true"`},
		{"leading zero number", `[01]`, `line 1, column 3: unexpected '1', expected ',' or ']'`},
		{"no fraction digits", `[1.]`, `line 1, column 4: invalid number: no digits after '.'`},
		{"raw newline in string", "[\"a\nb\"]", `line 1, column 4: control character 0x0a in a string (write it as an escape such as \n)`},
		{"bad escape", `["\x"]`, `line 1, column 4: invalid escape '\x' in a string`},
		{"short unicode escape", `["\u12"]`, `line 1, column 7: invalid \u escape: '"' is not a hex digit`},
		{"invalid utf-8", "[\"a\xffb\"]", `line 1, column 4: invalid UTF-8 (byte 0xff); save the file as UTF-8`},
		{"unterminated", `{"a": "b`, `line 1, column 9: unexpected end of file in a string`},
		{"deep", strings.Repeat("[", 300) + strings.Repeat("]", 300), "line 1, column 257: nested deeper than 256 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := taskfile.ParseValue([]byte(tt.in))
			var se *taskfile.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("ParseValue(%q) error = %v, want a *SyntaxError", tt.in, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("ParseValue(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseValue_Values(t *testing.T) {
	v, err := taskfile.ParseValue([]byte(`{"z": 1, "a": [true, false, null, -0.5e+3, "\u00e9\ud83d\ude00\n"], "m": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	obj := v.(*taskfile.Object)
	if got, want := strings.Join(obj.Keys(), ","), "z,a,m"; got != want {
		t.Errorf("keys = %s, want %s", got, want)
	}
	arr, _ := obj.Get("a")
	got := arr.([]any)
	if got[0] != true || got[1] != false || got[2] != nil || got[3] != json.Number("-0.5e+3") || got[4] != "é😀\n" {
		t.Errorf("array = %#v", got)
	}
	if n, ok := obj.Int("z"); !ok || n != 1 {
		t.Errorf("Int(z) = %d, %v, want 1, true", n, ok)
	}
}

// stringifyCases are documents whose encoding must equal JavaScript's
// JSON.stringify(JSON.parse(doc), null, 2). Keys are not integer-like: a
// JavaScript object moves those to the front, which taskd deliberately does
// not do (it keeps the file's order).
var stringifyCases = []string{
	`{}`,
	`[]`,
	`{"id": "7", "subject": "Fix <b>&amp;</b> \"quotes\"", "blocks": [], "blockedBy": ["3", "4"], "metadata": {"nested": {"deep": [1, 2.5, -3e-7, true, null, {}]}}}`,
	`{"text": "tab\there\r\nctl\u0001\u001f del\u007f sep\u2028\u2029 emoji😀 ü"}`,
	`{"slash": "a/b\/c", "backslash": "c:\\dir", "unicode": "\u00e9"}`,
	`[[[]], [{}], [{"a": []}]]`,
	`{"big": 12345678901234567890, "neg": -0, "exp": 1E+2}`,
}

func TestAppendJSON_MatchesJSONStringify(t *testing.T) {
	node := nodeTools(t)
	for _, doc := range stringifyCases {
		v, err := taskfile.ParseValue([]byte(doc))
		if err != nil {
			t.Fatalf("ParseValue(%s): %v", doc, err)
		}
		got := string(taskfile.MarshalIndent(v))
		cmd := exec.Command("node", filepath.Join(node, "stringify.js"))
		cmd.Stdin = strings.NewReader(doc)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node stringify.js: %v", err)
		}
		want := string(out)
		if strings.Contains(doc, `"big"`) {
			// JavaScript rounds numbers through doubles; taskd keeps the
			// literal. Compare only the layout around them.
			want = strings.NewReplacer("12345678901234567000", "12345678901234567890", `"neg": 0`, `"neg": -0`, `"exp": 100`, `"exp": 1E+2`).Replace(want)
		}
		if got != want {
			t.Errorf("AppendJSON(%s)\n got %q\nwant %q", doc, got, want)
		}
	}
}

func TestObject_SetNumbers(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{3, "3"},
		{int64(-9), "-9"},
		{1.5, "1.5"},
		{1234567.0, "1234567"},
		{1e21, "1e+21"},
		{1.5e-7, "1.5e-7"},
		{0.000001, "0.000001"},
	}
	for _, tt := range tests {
		o := taskfile.NewObject()
		o.Set("n", tt.in)
		if got := string(taskfile.MarshalIndent(o)); got != "{\n  \"n\": "+tt.want+"\n}" {
			t.Errorf("Set(%v) encodes as %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestObject_OrderAndDelete(t *testing.T) {
	o := taskfile.NewObject()
	o.Set("b", 1)
	o.Set("a", "x")
	o.Set("b", 2) // keeps its place
	o.EnsureObject("c").Set("d", []string{"e"})
	o.Delete("a")
	got := string(taskfile.MarshalIndent(o))
	want := "{\n  \"b\": 2,\n  \"c\": {\n    \"d\": [\n      \"e\"\n    ]\n  }\n}"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	c := o.Clone()
	c.Object("c").Set("d", "changed")
	if got2 := string(taskfile.MarshalIndent(o)); got2 != want {
		t.Errorf("Clone shares state with the original: %s", got2)
	}
}

// nodeTools returns the directory of the Node test tools (testdata/node) or
// skips the test when Node or the installed packages are missing. With
// TASKD_REQUIRE_TOOLS=1 (set by .ci/run) a missing tool fails the test.
func nodeTools(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "node"))
	if err != nil {
		t.Fatal(err)
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "proper-lockfile")); err != nil {
		missing = "the npm packages are not installed (run: npm ci --prefix testdata/node)"
	}
	if missing != "" {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s, and TASKD_REQUIRE_TOOLS=1", missing)
		}
		t.Skipf("skipping: %s", missing)
	}
	return dir
}
