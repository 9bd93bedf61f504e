package navigator_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/taskd/taskd/navigator"
)

// TestResponse_JSON checks the encoding rules that make responses
// byte-compatible with JSON.stringify: field order, null for empty
// strings, absent keys, and raw UTF-8 with only the necessary escapes.
func TestResponse_JSON(t *testing.T) {
	no := false
	r := &navigator.Response{
		CurrentStep: "s\"1\\\n\u2028é<&>\x01", Action: navigator.ActionAdvance, Terminal: navigator.TerminalSuccess,
		StepInstructions: &navigator.StepInstructions{Name: "N", Guidance: "G"},
		Metadata:         navigator.Metadata{WorkflowType: "w", CurrentStep: "s", RetryCount: 2, Autonomy: &no},
		Join:             &navigator.Join{Strategy: "all-pass"},
	}
	got := string(r.AppendJSON(nil))
	want := `{"currentStep":"s\"1\\\n` + "\u2028é<&>" + `\u0001","stage":null,"subagent":null,` +
		`"stepInstructions":{"name":"N","description":null,"guidance":"G"},"terminal":"success","action":"advance",` +
		`"retriesIncremented":false,"autonomyContinued":false,"maxRetries":0,"orchestratorInstructions":null,` +
		`"metadata":{"workflowType":"w","currentStep":"s","retryCount":2,"autonomy":false},"sourceRoot":null,"join":{"strategy":"all-pass"}}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Error("invalid JSON")
	}
	// encoding/json re-escapes <, >, & and U+2028 in a Marshaler's output;
	// the value is the same.
	var a, b any
	data, _ := json.Marshal(r)
	json.Unmarshal(data, &a)
	json.Unmarshal([]byte(want), &b)
	if ja, jb := mustJSON(a), mustJSON(b); ja != jb {
		t.Errorf("json.Marshal differs from AppendJSON:\n%s", data)
	}
	bad := &navigator.Response{CurrentStep: "a\xffb"}
	if data := bad.AppendJSON(nil); !json.Valid(data) {
		t.Errorf("invalid UTF-8 produced invalid JSON: %q", data)
	}
}

func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// TestResponse_Command checks that taskd's command extension reaches Go
// callers but stays out of flow's JSON.
func TestResponse_Command(t *testing.T) {
	wf, err := navigator.Parse([]byte(`{"nodes": {"start": {"type": "start"}, "t": {"type": "gate", "command": "make test"},
	  "f": {"type": "fork", "join": "j", "branches": {"b": {"entryStep": "t"}}}, "j": {"type": "join", "fork": "f"}},
	  "edges": [{"from": "start", "to": "t"}, {"from": "t", "to": "j"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cat := testCatalog{wfs: map[string]*navigator.Workflow{"w": wf}}
	resp, _, err := navigator.Navigate(cat, nil, navigator.Input{WorkflowType: "w"})
	if err != nil || resp.Command != "make test" {
		t.Fatalf("Command = %q, %v", resp.Command, err)
	}
	fork, _, _ := navigator.Navigate(cat, nil, navigator.Input{WorkflowType: "w", StepID: "f"})
	if fork.Fork.Branches[0].Command != "make test" {
		t.Errorf("branch Command = %q", fork.Fork.Branches[0].Command)
	}
	for _, r := range []*navigator.Response{resp, fork} {
		if data := r.AppendJSON(nil); bytes.Contains(data, []byte("make test")) {
			t.Errorf("the command leaked into flow's JSON: %s", data)
		}
	}
}

// TestResponse_JSONAsStringify checks values copied from the workflow file
// into a response, as JSON.stringify writes what JSON.parse read: keys in
// JavaScript's order, numbers as JavaScript prints them, and lone
// surrogates escaped in lowercase.
func TestResponse_JSONAsStringify(t *testing.T) {
	wf, err := navigator.Parse([]byte(`{"nodes": {"start": {"type": "start"},
	  "f": {"type": "fork", "join": "j", "branches": {"b": {"entryStep": "missing", "n": 1.0, "z": -0, "e": 1E+2, "note": "\uDFFF", "10": true}}},
	  "j": {"type": "join", "fork": "f"}},
	  "edges": [{"from": "start", "to": "f"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cat := testCatalog{wfs: map[string]*navigator.Workflow{"w": wf}}
	resp, _, err := navigator.Navigate(cat, nil, navigator.Input{WorkflowType: "w", StepID: "f"})
	if err != nil {
		t.Fatal(err)
	}
	got := resp.AppendJSON(nil)
	want := `"b":{"10":true,"entryStep":"missing","n":1,"z":0,"e":100,"note":"\udfff","error":"Entry step 'missing' not found"}`
	if !bytes.Contains(got, []byte(want)) {
		t.Errorf("response\n%s\nlacks\n%s", got, want)
	}
}
