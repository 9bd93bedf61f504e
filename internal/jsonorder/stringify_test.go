package jsonorder_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/internal/jsonorder"
)

// javaScript reads documents as JSON.parse reads a file's text.
var javaScript = jsonorder.Options{
	JavaScriptOrder:    true,
	Duplicate:          func(*jsonorder.Object, string) {},
	ReplaceInvalidUTF8: true,
	JavaScriptNumbers:  true,
}

// stringifyDocs are documents whose decoding with the javaScript options,
// encoded, must equal what Node makes of the same bytes:
// JSON.stringify(JSON.parse(text)) and JSON.stringify(JSON.parse(text),
// null, 2).
var stringifyDocs = []string{
	`{}`,
	`[]`,
	`{"id": "7", "subject": "Fix <b>&amp;</b> \"quotes\"", "blocks": [], "blockedBy": ["3", "4"], "metadata": {"nested": {"deep": [1, 2.5, -3e-7, true, null, {}]}}}`,
	`{"text": "tab\there\r\nctl\u0001\u001f del\u007f sep\u2028\u2029 emoji😀 ü"}`,
	`{"slash": "a/b\/c", "backslash": "c:\\dir", "unicode": "\u00e9\u00E9"}`,
	`[[[]], [{}], [{"a": []}]]`,
	`{"b": 1, "10": 2, "a": 3, "2": 4, "01": 5, "-1": 6, "4294967295": 7, "4294967294": 8, "a": 9}`,
	`[1.0, -0, 1E+2, 1e-7, 0.000001, 1.5e-5, 123456789012345678901, 1e21, 5e-324, 0.1, -12.50, 9007199254740993]`,
	`{"lone": "\ud800", "low": "\udc00x", "upper": "\uDBFF", "pair": "\ud83d\ude00", "UPPER pair": "\uD83D\uDE00"}`,
	`["\ud800\ud800", "\udc00\ud800", "\ud83d\ud83d\ude00", "\ude00\ud83d", "a\ud800b", "\ud800\u0041"]`,
	`{"\ud800": "key", "k\udfff": ["\udfff"]}`,
	"[\"raw \xff byte\", \"cut \xe2\x82 sequence\", \"raw surrogate \xed\xa0\x80\", \"overlong \xc0\xaf\", \"\xf4\x90\x80\x80 above\", \"\xf0\x9f\x98\"]",
	"{\"\xff\": \"invalid key\"}",
}

// TestDecode_MatchesJavaScript checks decoding and both layouts against
// Node.
func TestDecode_MatchesJavaScript(t *testing.T) {
	want := nodeStringify(t, stringifyDocs)
	for i, doc := range stringifyDocs {
		v, err := jsonorder.Decode([]byte(doc), javaScript)
		if err != nil {
			t.Errorf("Decode(%q): %v", doc, err)
			continue
		}
		if got := string(jsonorder.AppendCompact(nil, v)); got != want[i].Compact {
			t.Errorf("AppendCompact(%q)\n got %q\nwant %q", doc, got, want[i].Compact)
		}
		if got := string(jsonorder.AppendIndent(nil, v)); got != want[i].Indented {
			t.Errorf("AppendIndent(%q)\n got %q\nwant %q", doc, got, want[i].Indented)
		}
	}
}

// TestAppendString_MatchesJavaScript checks strings that no decoding
// returns, built by Go code from lone surrogates: halves put side by side
// form a pair, as they do when JavaScript joins two strings.
func TestAppendString_MatchesJavaScript(t *testing.T) {
	tests := [][]string{
		{`\ud83d`, `\ude00`},
		{`\ud83d`, `\ud83d`, `\ude00`, `\ude00`},
		{`\ude00`, `\ud83d`},
		{`\udbff`, `\udfff`, `x`},
	}
	docs := make([]string, len(tests))
	for i, parts := range tests {
		docs[i] = `"` + strings.Join(parts, "") + `"`
	}
	want := nodeStringify(t, docs)
	for i, parts := range tests {
		var s string
		for _, p := range parts {
			v, err := jsonorder.Decode([]byte(`"`+p+`"`), jsonorder.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s += v.(string)
		}
		if got := string(jsonorder.AppendString(nil, s)); got != want[i].Compact {
			t.Errorf("AppendString(%q) = %s, want %s", strings.Join(parts, " + "), got, want[i].Compact)
		}
	}
}

type stringified struct {
	Compact, Indented, Error string
}

// nodeStringify runs testdata/node/stringify-cases.js on docs.
func nodeStringify(t *testing.T, docs []string) []stringified {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatal("node is not on PATH, and TASKD_REQUIRE_TOOLS=1")
		}
		t.Skip("skipping: node is not on PATH")
	}
	in := make([]string, len(docs))
	for i, d := range docs {
		in[i] = base64.StdEncoding.EncodeToString([]byte(d))
	}
	input, _ := json.Marshal(in)
	cmd := exec.Command("node", filepath.Join("..", "..", "testdata", "node", "stringify-cases.js"))
	cmd.Stdin = strings.NewReader(string(input))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node stringify-cases.js: %v", err)
	}
	var res []stringified
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(docs) {
		t.Fatalf("node stringify-cases.js answered %q: %v", out, err)
	}
	for i, r := range res {
		if r.Error != "" {
			t.Fatalf("JSON.parse(%q): %s", docs[i], r.Error)
		}
	}
	return res
}
