package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// daemonToolNames are the daemon's tools, in the order they are added.
var daemonToolNames = []string{"submit", "status", "show", "wait", "resolve", "cancel", "retry", "logs"}

// TestToolsList: a client that connects sees flow's eight tools, by
// flow's names with flow's input schemas, and the daemon's eight; each
// Toolset offers its own only, and the server names itself taskd.
func TestToolsList(t *testing.T) {
	for _, tt := range []struct {
		name  string
		tools Toolset
		want  []string
	}{
		{"all", All, append(flowToolNames(), daemonToolNames...)},
		{"navigator", Navigator, flowToolNames()},
		{"daemon", Daemon, daemonToolNames},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOpts{opts: Options{Tools: tt.tools, Version: "v9"}})
			if info := e.cs.InitializeResult().ServerInfo; info.Name != "taskd" || info.Version != "v9" {
				t.Errorf("server info = %+v", info)
			}
			res, err := e.cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tool := range res.Tools {
				got = append(got, tool.Name)
				if tool.Description == "" {
					t.Errorf("%s has no description", tool.Name)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("tools\n got %v\nwant %v", got, want)
			}
			for _, tool := range res.Tools {
				if i := slices.IndexFunc(NavigatorTools, func(n *mcp.Tool) bool { return n.Name == tool.Name }); i >= 0 {
					if got, want := schemaOf(t, tool.InputSchema), schemaOf(t, NavigatorTools[i].InputSchema); !reflect.DeepEqual(got, want) {
						t.Errorf("%s: schema\n got %v\nwant %v", tool.Name, got, want)
					}
				}
			}
		})
	}
}

// TestNavigatorSchemas pins flow's input schemas, as a client sees them
// without their descriptions: the property names, types, enums and
// required fields of flow v2.1.0's navigator.
func TestNavigatorSchemas(t *testing.T) {
	want := map[string]string{
		"Navigate":       `{"type":"object","properties":{"taskFilePath":{"type":"string"},"workflowType":{"type":"string"},"result":{"type":"string","enum":["passed","failed"]},"description":{"type":"string"},"autonomy":{"type":"boolean"},"stepId":{"type":"string"}}}`,
		"ListWorkflows":  `{"type":"object","properties":{"source":{"type":"string","enum":["all","project","catalog","external"]}}}`,
		"SelectWorkflow": `{"type":"object","properties":{}}`,
		"Diagram":        `{"type":"object","properties":{"workflowType":{"type":"string"},"currentStep":{"type":"string"},"filePath":{"type":"string"}},"required":["workflowType"]}`,
		"CopyWorkflows":  `{"type":"object","properties":{"workflowIds":{"type":"array","items":{"type":"string"}}}}`,
		"CopyAgents":     `{"type":"object","properties":{"agentIds":{"type":"array","items":{"type":"string"}},"targetDir":{"type":"string"}}}`,
		"LoadWorkflows":  `{"type":"object","properties":{"path":{"type":"string"},"sourceRoot":{"type":"string"},"workflowIds":{"type":"array","items":{"type":"string"}}}}`,
		"ListCatalog":    `{"type":"object","properties":{}}`,
	}
	if got := flowToolNames(); !slices.Equal(got, []string{"Navigate", "ListWorkflows", "SelectWorkflow", "Diagram", "CopyWorkflows", "CopyAgents", "LoadWorkflows", "ListCatalog"}) {
		t.Errorf("flow's tools in order: %v", got)
	}
	for _, tool := range NavigatorTools {
		var w any
		if err := json.Unmarshal([]byte(want[tool.Name]), &w); err != nil {
			t.Fatal(err)
		}
		if got := stripProse(schemaOf(t, tool.InputSchema)); !reflect.DeepEqual(got, w) {
			t.Errorf("%s: schema without its prose\n got %v\nwant %v", tool.Name, got, w)
		}
	}
}

// TestCompatTools compares the navigator tools with flow v2.1.0's as
// recorded in the compatibility folder (opt-in: TASKD_COMPAT_DIR): the
// same names (tools/list gives them in name order) and the same input schemas, descriptions
// left out as the recording leaves them out; and a client asking for
// flow's protocol version gets it.
func TestCompatTools(t *testing.T) {
	dir := os.Getenv("TASKD_COMPAT_DIR")
	if dir == "" {
		t.Skip("set TASKD_COMPAT_DIR to the flow-v2.1.0 compatibility folder to compare with flow's tools")
	}
	data, err := os.ReadFile(filepath.Join(dir, "mcp-tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var flow struct {
		Server struct{ ProtocolVersion string }
		Tools  []struct {
			Name        string
			InputSchema any
		}
	}
	if err := json.Unmarshal(data, &flow); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{protocol: flow.Server.ProtocolVersion, opts: Options{Tools: Navigator}})
	if got := e.cs.InitializeResult().ProtocolVersion; got != flow.Server.ProtocolVersion {
		t.Errorf("protocol version %q, want flow's %q", got, flow.Server.ProtocolVersion)
	}
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(flow.Tools) {
		t.Fatalf("%d tools, flow has %d", len(res.Tools), len(flow.Tools))
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	for _, ft := range flow.Tools {
		got := byName[ft.Name]
		if got == nil {
			t.Errorf("no tool %s", ft.Name)
			continue
		}
		if g := stripDescriptions(schemaOf(t, got.InputSchema)); !reflect.DeepEqual(g, ft.InputSchema) {
			t.Errorf("%s: schema without descriptions\n got %v\nflow %v", ft.Name, g, ft.InputSchema)
		}
	}
}

func flowToolNames() []string {
	var out []string
	for _, tool := range NavigatorTools {
		out = append(out, tool.Name)
	}
	return out
}

// schemaOf decodes a tool's input schema into plain JSON values.
func schemaOf(t *testing.T, schema any) any {
	t.Helper()
	data, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// stripDescriptions removes every "description" key of v, as the
// recording of flow's tools did to leave the prose out. That drops
// Navigate's "description" property too, which the recording lacks for
// that reason: flow's server declares it and its /flow:run passes it.
func stripDescriptions(v any) any {
	return strip(v, func(any) bool { return true })
}

// stripProse removes the "description" keys of v that are prose (a
// string), keeping properties named description.
func stripProse(v any) any {
	return strip(v, func(e any) bool { _, ok := e.(string); return ok })
}

func strip(v any, drop func(any) bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if k != "description" || !drop(e) {
				out[k] = strip(e, drop)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = strip(e, drop)
		}
		return out
	}
	return v
}
