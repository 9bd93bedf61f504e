package kindtest_test

import (
	"testing"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/agent/kindtest"
	"github.com/taskd/taskd/daemon/config"
)

// builtinSamples are runs of the built-in kinds' agents, in their own
// formats, each ending with the report {"success": true, "summary": "tests pass"}.
var builtinSamples = map[string]kindtest.Sample{
	"claude": {Session: "s-1", Summary: "tests pass", Limit: "You've hit your limit · resets 8pm (Europe/Lisbon)",
		Outputs: map[string]string{
			agent.OutputClaudeStream: `{"type":"system","subtype":"init","cwd":"/p","session_id":"s-1","model":"claude-sonnet-4-5"}
{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make test"}}],"usage":{"input_tokens":1000,"output_tokens":10}},"session_id":"s-1"}
{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done {\"success\": true, \"summary\": \"tests pass\"}","session_id":"s-1","total_cost_usd":0.0123}`,
			agent.OutputClaudeJSON: `{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done {\"success\": true, \"summary\": \"tests pass\"}","session_id":"s-1","total_cost_usd":0.0123}`,
		}},
	"codex": {Session: "thread-1", Summary: "tests pass", Limit: "ERROR: You've hit your usage limit. Try again in 2 hours.",
		Outputs: map[string]string{agent.OutputCodexJSON: `{"type":"thread.started","thread_id":"thread-1"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Fixed. {\"success\": true, \"summary\": \"tests pass\"}"}}
{"type":"turn.completed","usage":{"input_tokens":5000,"cached_input_tokens":1000,"output_tokens":200}}`}},
	"opencode": {Session: "ses_1", Summary: "tests pass", Limit: "Error: 429 Too Many Requests",
		Outputs: map[string]string{agent.OutputOpencodeJSON: `{"type":"step_start","sessionID":"ses_1","part":{"id":"prt_1","type":"step-start"}}
{"type":"text","sessionID":"ses_1","part":{"id":"prt_5","type":"text","text":"All pass. {\"success\": true, \"summary\": \"tests pass\"}"}}
{"type":"step_finish","sessionID":"ses_1","part":{"id":"prt_6","type":"step-finish","reason":"stop","cost":0.0015,"tokens":{"input":1300,"output":20,"reasoning":0,"cache":{"read":1000,"write":0}}}}`}},
	"none": {Limit: "rate limit exceeded, try again at 17:00"},
}

// TestKindsConform runs the conformance suite over every registered kind:
// each built-in kind must be there, and pass it.
func TestKindsConform(t *testing.T) {
	seen := 0
	for _, c := range config.Kinds() {
		k := agent.KindOf(&config.Profile{Flags: c.Name})
		s, ok := builtinSamples[c.Name]
		if !ok {
			continue // a kind a test of another package adds
		}
		seen++
		t.Run(c.Name, func(t *testing.T) { kindtest.Run(t, k, s) })
	}
	if seen != len(builtinSamples) {
		t.Errorf("%d of the %d built-in kinds are registered", seen, len(builtinSamples))
	}
}
