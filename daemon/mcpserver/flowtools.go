package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/taskd/taskd/internal/jsonorder"
)

// This file defines flow's eight navigator tools as taskd offers them:
// flow's names and input schemas (the facts a client sees in tools/list),
// taskd's own descriptions, and the envelope every answer comes in: the
// JSON of the answer as the text of the result, as JSON.stringify(answer,
// null, 2) writes it, and for a failure flow's error object,
// {"schemaVersion": 2, "error": …, "tool": …, "args": …}.

// NavigatorTools are flow's tools in the order flow lists them, with
// their input schemas.
var NavigatorTools = []*mcp.Tool{
	{Name: "Navigate", Description: "Walk a workflow one step at a time, as flow's navigator does: with workflowType (and description, stepId) it starts one and returns the first step; with taskFilePath it returns the task's current step, and with result (passed or failed) it advances to the next step and records it in the task file.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {
  "taskFilePath": {"type": "string", "description": "The task file, ~/.claude/tasks/<list>/<id>.json: its metadata says the workflow and the current step."},
  "workflowType": {"type": "string", "description": "The workflow to start, when there is no task file yet (ListWorkflows lists them)."},
  "result": {"type": "string", "enum": ["passed", "failed"], "description": "How the current step went: advance to the next step. Leave it out to read the current step."},
  "description": {"type": "string", "description": "What the user wants done, for the step's instructions (default: the task's metadata.userDescription)."},
  "autonomy": {"type": "boolean", "description": "Walk on through stage boundaries (success ends with a way on) instead of stopping at each; false switches it off."},
  "stepId": {"type": "string", "description": "Start at this step instead of the first one (a task without a current step)."}}}`)},
	{Name: "ListWorkflows", Description: "List the workflows Navigate can walk: this project's (.flow/workflows), those loaded with LoadWorkflows, and taskd's.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {
  "source": {"type": "string", "enum": ["all", "project", "catalog", "external"], "description": "Which workflows: default project when the project has any, else all."}}}`)},
	{Name: "SelectWorkflow", Description: "The workflows with questions for AskUserQuestion, to let the user pick one.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {}}`)},
	{Name: "Diagram", Description: "Write a workflow as a Mermaid flowchart with a table of its steps into a Markdown file (default .flow/diagrams/<workflowType>.md), highlighting a step if asked.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {
  "workflowType": {"type": "string", "description": "The workflow to draw."},
  "currentStep": {"type": "string", "description": "A step to highlight."},
  "filePath": {"type": "string", "description": "Where to write the diagram, inside the project."}}, "required": ["workflowType"]}`)},
	{Name: "CopyWorkflows", Description: "Copy workflows from taskd's catalog (ListCatalog) into this project's .flow/workflows/<id>/workflow.json, where they can be changed.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {
  "workflowIds": {"type": "array", "items": {"type": "string"}, "description": "The workflows to copy."}}}`)},
	{Name: "CopyAgents", Description: "Copy agent templates from taskd's catalog (ListCatalog) into this project's .claude/agents.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {
  "agentIds": {"type": "array", "items": {"type": "string"}, "description": "The agents to copy."},
  "targetDir": {"type": "string", "description": "Where to put them (default .claude/agents), inside the project."}}}`)},
	{Name: "LoadWorkflows", Description: "Check and load workflows: without path, this project's .flow/workflows (list them, or load workflowIds); with path, a plugin's (<path>/.flow/workflows, or path itself with sourceRoot).",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {
  "path": {"type": "string", "description": "A plugin's root, whose .flow/workflows are loaded; with sourceRoot, the directory of workflow files itself."},
  "sourceRoot": {"type": "string", "description": "Where the loaded workflows' ./ paths point (default: path)."},
  "workflowIds": {"type": "array", "items": {"type": "string"}, "description": "The project workflows to load; leave out to list them."}}}`)},
	{Name: "ListCatalog", Description: "List the workflows and agent templates of taskd's catalog, with options for AskUserQuestion.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {}}`)},
}

// navigatorHandler is one of flow's tools: given the client's scope and
// the call's arguments, it returns the answer, or an error that becomes
// flow's error object.
type navigatorHandler func(ctx context.Context, sc *scope, args *jsonorder.Object) (any, error)

// needsScope lists the tools that work in the client's directories (its
// project): they ask the client for its roots first.
var needsScope = map[string]bool{"Navigate": true, "ListWorkflows": true, "SelectWorkflow": true, "Diagram": true,
	"CopyWorkflows": true, "CopyAgents": true, "LoadWorkflows": true}

func (s *Server) addNavigatorTools() {
	handlers := map[string]navigatorHandler{
		"Navigate":       s.navigate,
		"ListWorkflows":  s.listWorkflows,
		"SelectWorkflow": s.selectWorkflow,
		"Diagram":        s.diagram,
		"CopyWorkflows":  s.copyWorkflows,
		"CopyAgents":     s.copyAgents,
		"LoadWorkflows":  s.loadWorkflows,
		"ListCatalog":    s.listCatalog,
	}
	for _, t := range NavigatorTools {
		h := handlers[t.Name]
		s.srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sc := s.scopeOf(nil)
			if needsScope[t.Name] {
				var ask *mcp.CallToolResult
				if sc, ask = s.clientScope(req); ask != nil {
					return ask, nil
				}
			}
			args, err := decodeArgs(req.Params.Arguments)
			var answer any
			if err == nil {
				in := args
				if in == nil {
					in = jsonorder.NewObject()
				}
				answer, err = h(ctx, sc, in)
			}
			if err != nil {
				s.opts.Log.Debug("navigator tool failed", "tool", t.Name, "err", err)
				answer = errorObject(t.Name, args, err)
			}
			return textResult(jsonorder.AppendIndent(nil, answer)), nil
		})
	}
}

// decodeArgs decodes a call's arguments as JSON.parse does (JavaScript's
// key order, a repeated key keeps its last value, numbers as JavaScript
// prints them). No arguments are an empty object.
func decodeArgs(raw json.RawMessage) (*jsonorder.Object, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	v, err := jsonorder.Decode(raw, jsonorder.Options{JavaScriptOrder: true, JavaScriptNumbers: true, Duplicate: func(*jsonorder.Object, string) {}})
	if err != nil {
		return nil, fmt.Errorf("the arguments are not JSON: %w", err)
	}
	o, ok := v.(*jsonorder.Object)
	if !ok {
		return nil, fmt.Errorf("the arguments are %s, not an object", jsonorder.TypeName(v))
	}
	return o, nil
}

// errorObject is flow's answer for a call that failed: its message, the
// tool and the arguments as they came (none: no "args").
func errorObject(tool string, args *jsonorder.Object, err error) *jsonorder.Object {
	o := jsonorder.NewObject()
	o.Set("schemaVersion", json.Number("2"))
	o.Set("error", err.Error())
	o.Set("tool", tool)
	if args != nil {
		o.Set("args", args)
	}
	return o
}

func textResult(text []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// stringArg returns args' key as flow reads it: a string, "" when absent,
// null or empty. Another type is an error (flow would pass it on to
// JavaScript's mercies).
func stringArg(args *jsonorder.Object, key string) (string, error) {
	v, _ := args.Get(key)
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("%s is %s: a string is expected", key, jsonorder.TypeName(v))
	}
}

// stringsArg returns args' key, an array of strings; nil when absent or
// null.
func stringsArg(args *jsonorder.Object, key string) ([]string, error) {
	v, _ := args.Get(key)
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s holds %s: strings are expected", key, jsonorder.TypeName(e))
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is %s: an array of strings is expected", key, jsonorder.TypeName(v))
}

// boolArg returns args' key as JavaScript tests it: nil when absent or
// null, else whether it is truthy.
func boolArg(args *jsonorder.Object, key string) *bool {
	v, _ := args.Get(key)
	var b bool
	switch v := v.(type) {
	case nil:
		return nil
	case bool:
		b = v
	case string:
		b = v != ""
	case json.Number:
		f, err := v.Float64()
		b = err != nil || f != 0
	default:
		b = true
	}
	return &b
}
