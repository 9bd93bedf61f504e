package task

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/taskd/taskd/taskfile"
)

// ownerPrefix marks tasks addressed to taskd by their owner field.
const Owner = "taskd"

// Addressed reports whether task is taskd's (docs/tasks.md): owner "taskd" or
// "taskd:<profile>", or a metadata.taskd object. profile is the profile the
// owner names, if any.
func Addressed(t *taskfile.Task) (ok bool, profile string) {
	if t.Owner == Owner {
		ok = true
	} else if p, found := strings.CutPrefix(t.Owner, Owner+":"); found {
		ok, profile = true, p
	}
	if t.Metadata.Object("taskd") != nil {
		ok = true
	}
	return ok, profile
}

// Spec is what a taskd task asks for, read from metadata.taskd with its
// types checked. The zero values mean "not set".
type Spec struct {
	Prompt         string
	HasPrompt      bool
	Agent          string // explicit agent or profile
	Model          string
	Cwd            string
	Timeout        time.Duration
	Retries        int
	Cancel         bool
	Resolve        string
	PermissionMode string
	Tools          []string
	DisallowTools  []string
	SystemPrompt   string
	// Worktree runs the agent in a git worktree of its own (worktree.go).
	Worktree bool
	// Labels are what the worker that runs the agent must have
	// (labels.go): it runs only on a worker with every one of them.
	Labels []string
	// MaxTurns and MaxCostUSD are the task's budget (0: the list's or
	// the profile's, if any).
	MaxTurns   int
	MaxCostUSD float64
	// OnDenied says what follows an attempt whose tool calls were denied:
	// DeniedAsk (the default) or DeniedFail.
	OnDenied string
	// Priority orders the tasks of a list that may start: the highest
	// first, ties in id order (docs/scheduling.md).
	Priority int
	// NotBefore is the time before which the task does not start (zero:
	// any time).
	NotBefore time.Time
	// Schedule makes the task a schedule: a cron expression (with an
	// optional CRON_TZ= zone) at whose times a run of it is made; Overlap
	// lets a run start while the one before still goes.
	Schedule string
	Overlap  bool
	// ScheduledFor, on a schedule's run, is the time it was made for.
	ScheduledFor time.Time
	// AnswerRequired: the task's answer is voted on (/converge vote or
	// consensus), so a model's answer must carry one (package plain).
	AnswerRequired bool

	State     State
	Attempt   int
	Failures  int
	RetryAt   time.Time
	Parent    string
	SessionID string
	Archived  bool

	// OnBlockerFailure is "wait" when the task waits for a blocker that
	// failed for good or was cancelled (until a person starts it again),
	// rather than fail at once ("fail", the default).
	OnBlockerFailure string

	// Description is the task's description: the prompt of a task whose
	// metadata.taskd names none (Text).
	Description string
	// OwnerProfile is the profile the task's owner names
	// ("taskd:<profile>", Addressed), if any.
	OwnerProfile string
	// Worker is the agent that runs the steps a planner plans
	// (metadata.taskd.worker).
	Worker string
	// Inherited are the fields the task took from the task it follows
	// (metadata.taskd.inherited), which a block of its prompt overrides.
	Inherited []string
	// Block are the fields a /subtask block or a command file's
	// frontmatter can also set (BlockKeys), as the file holds them: package
	// chain reads them (chain.OverridesOf, chain.CheckBlock).
	Block map[string]any
}

// BlockKeys are the metadata.taskd fields a /subtask block or a command
// file's frontmatter can set (Spec.Block).
var BlockKeys = []string{"model", "agent", "loop", "return", "parallel", "as", "auto"}

// Text is the prompt the task gives its agent: metadata.taskd.prompt, or
// else its description.
func (s Spec) Text() string {
	if s.HasPrompt {
		return s.Prompt
	}
	return s.Description
}

// fieldType lists the user-settable metadata.taskd fields and their types,
// for checking and for messages.
var fieldType = map[string]string{
	"prompt": "string", "agent": "string", "model": "string", "cwd": "string",
	"timeout": "duration", "retries": "count", "cancel": "bool", "resolve": "string",
	"permissionMode": "string", "tools": "strings", "disallowedTools": "strings",
	"systemPrompt": "string", "allowBypass": "bool",
	"worktree": "bool", "maxTurns": "count", "maxCostUsd": "amount", "onDenied": "denied",
	"state": "string", "attempt": "count", "failures": "count", "retryAt": "time",
	"parent": "string", "sessionId": "string", "archived": "bool",
	"onBlockerFailure": "string",
	"resolveNote":      "string", "worker": "string", "retryOf": "count", "genericReturn": "string",
	"repo": "string", "ref": "string", "answerRequired": "bool", "labels": "labels",
	"priority": "priority", "notBefore": "time", "schedule": "string", "overlap": "bool",
	"scheduledFor": "time",
}

// The bounds of metadata.taskd.priority.
const (
	MinPriority = -1_000_000_000
	MaxPriority = 1_000_000_000
)

// ReadSpec checks and reads metadata.taskd. Errors say which field is wrong
// and how to write it; they make the daemon reject the file.
func ReadSpec(t *taskfile.Task) (Spec, error) {
	var s Spec
	s.Description = t.Description
	_, s.OwnerProfile = Addressed(t)
	td := t.Metadata.Object("taskd")
	if v, ok := t.Metadata.Get("taskd"); ok && td == nil {
		return s, fmt.Errorf(`metadata.taskd is %s; it must be an object such as {"prompt": "echo hi"}`, taskfile.TypeName(v))
	}
	if td == nil {
		return s, nil
	}
	for _, key := range td.Keys() {
		kind, known := fieldType[key]
		if !known {
			continue // kept, not understood: other features and users may add keys
		}
		v, _ := td.Get(key)
		if v == nil {
			continue // null means unset
		}
		if err := checkType(key, kind, v); err != nil {
			return s, err
		}
	}
	s.Prompt, s.HasPrompt = td.String("prompt")
	s.Agent, _ = td.String("agent")
	s.Model, _ = td.String("model")
	s.Cwd, _ = td.String("cwd")
	s.Cancel, _ = td.Bool("cancel")
	s.Resolve, _ = td.String("resolve")
	s.PermissionMode, _ = td.String("permissionMode")
	s.Tools = Strings(td, "tools")
	s.DisallowTools = Strings(td, "disallowedTools")
	s.SystemPrompt, _ = td.String("systemPrompt")
	s.Worktree, _ = td.Bool("worktree")
	s.Labels = Strings(td, "labels")
	if n, ok := td.Int("maxTurns"); ok {
		s.MaxTurns = int(n)
	}
	if v, ok := td.Get("maxCostUsd"); ok {
		if n, ok := v.(json.Number); ok {
			s.MaxCostUSD, _ = n.Float64()
		}
	}
	s.OnDenied, _ = td.String("onDenied")
	if n, ok := td.Int("priority"); ok {
		s.Priority = int(n)
	}
	if at, ok := td.String("notBefore"); ok {
		s.NotBefore, _ = time.Parse(time.RFC3339Nano, at)
	}
	s.Schedule, _ = td.String("schedule")
	s.Overlap, _ = td.Bool("overlap")
	if at, ok := td.String("scheduledFor"); ok {
		s.ScheduledFor, _ = time.Parse(time.RFC3339Nano, at)
	}
	s.AnswerRequired, _ = td.Bool("answerRequired")
	if st, ok := td.String("state"); ok {
		s.State = State(st)
	}
	s.Parent, _ = td.String("parent")
	s.SessionID, _ = td.String("sessionId")
	s.Archived, _ = td.Bool("archived")
	s.OnBlockerFailure, _ = td.String("onBlockerFailure")
	if p := s.OnBlockerFailure; p != "" && p != "wait" && p != "fail" {
		return s, fmt.Errorf(`metadata.taskd.onBlockerFailure is %q, want "fail" (the default: the task fails when a task it is blocked by fails for good or is cancelled) or "wait" (it waits until that task is started again and completes)`, p)
	}
	if n, ok := td.Int("retries"); ok {
		s.Retries = int(n)
	}
	if n, ok := td.Int("attempt"); ok {
		s.Attempt = int(n)
	}
	if n, ok := td.Int("failures"); ok {
		s.Failures = int(n)
	}
	if v, ok := td.Get("timeout"); ok && v != nil {
		s.Timeout, _ = ParseTimeout(v)
	}
	if at, ok := td.String("retryAt"); ok {
		s.RetryAt, _ = time.Parse(time.RFC3339Nano, at)
	}
	s.Worker, _ = td.String("worker")
	s.Inherited = Strings(td, "inherited")
	for _, k := range BlockKeys {
		if v, ok := td.Get(k); ok {
			if s.Block == nil {
				s.Block = map[string]any{}
			}
			s.Block[k] = v
		}
	}
	return s, nil
}

func checkType(key, kind string, v any) error {
	bad := func(want, example string) error {
		return fmt.Errorf("metadata.taskd.%s is %s, want %s (for example %s)", key, taskfile.TypeName(v), want, example)
	}
	switch kind {
	case "string":
		if _, ok := v.(string); !ok {
			return bad("a string", `"`+key+`": "…"`)
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			return bad("true or false", `"`+key+`": true`)
		}
	case "count":
		n, ok := v.(json.Number)
		if !ok {
			return bad("a whole number", `"`+key+`": 2`)
		}
		if i, err := n.Int64(); err != nil || i < 0 {
			return bad("a whole number ≥ 0", `"`+key+`": 2`)
		}
	case "strings":
		arr, ok := v.([]any)
		if !ok {
			return bad("an array of strings", `"`+key+`": ["Read", "Bash"]`)
		}
		for _, e := range arr {
			if _, ok := e.(string); !ok {
				return bad("an array of strings", `"`+key+`": ["Read", "Bash"]`)
			}
		}
	case "priority":
		n, ok := v.(json.Number)
		if !ok {
			return bad("a whole number", `"`+key+`": 10`)
		}
		if i, err := n.Int64(); err != nil || i < MinPriority || i > MaxPriority {
			return fmt.Errorf("metadata.taskd.%s is %s, want a whole number between %d and %d (higher starts first; 0 is the default)", key, n, MinPriority, MaxPriority)
		}
	case "labels":
		arr, ok := v.([]any)
		if !ok {
			return bad("an array of labels", `"`+key+`": ["gpu"]`)
		}
		labels := make([]string, 0, len(arr))
		for _, e := range arr {
			l, ok := e.(string)
			if !ok {
				return bad("an array of labels", `"`+key+`": ["gpu"]`)
			}
			labels = append(labels, l)
		}
		if err := CheckLabels(labels); err != nil {
			return fmt.Errorf("metadata.taskd.%s: %v", key, err)
		}
	case "amount":
		n, ok := v.(json.Number)
		f, err := n.Float64()
		if !ok || err != nil || f < 0 {
			return bad("an amount of US dollars ≥ 0", `"`+key+`": 2.5`)
		}
	case "denied":
		if v != DeniedAsk && v != DeniedFail {
			return fmt.Errorf("metadata.taskd.%s is %s, want %q (ask a person, the default) or %q", key, taskfile.AppendJSON(nil, v), DeniedAsk, DeniedFail)
		}
	case "duration":
		if _, err := ParseTimeout(v); err != nil {
			return fmt.Errorf("metadata.taskd.%s: %v", key, err)
		}
	case "time":
		s, ok := v.(string)
		if !ok {
			return bad("an RFC 3339 time", `"`+key+`": "2026-01-02T15:04:05Z"`)
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return bad("an RFC 3339 time", `"`+key+`": "2026-01-02T15:04:05Z"`)
		}
	}
	return nil
}

// ParseTimeout accepts a Go duration string ("90s", "10m") or a number of
// seconds.
func ParseTimeout(v any) (time.Duration, error) {
	switch v := v.(type) {
	case string:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("%q is not a duration; write it like \"90s\" or \"10m\", or as a number of seconds", v)
		}
		return d, nil
	case json.Number:
		f, err := v.Float64()
		ns := f * float64(time.Second)
		switch {
		case err != nil || f <= 0:
			return 0, fmt.Errorf("%s is not a positive number of seconds", v)
		case ns < 1:
			return 0, fmt.Errorf("%s seconds is less than a nanosecond", v)
		case ns >= math.MaxInt64:
			// Converted, it would be negative: the default timeout.
			return 0, fmt.Errorf("%s seconds is more than taskd can wait (%.0f seconds)", v, math.MaxInt64/float64(time.Second))
		}
		return time.Duration(ns), nil
	}
	return 0, fmt.Errorf("is %s; write it like \"90s\" or \"10m\", or as a number of seconds", taskfile.TypeName(v))
}

func Strings(o *taskfile.Object, key string) []string {
	v, _ := o.Get(key)
	arr, _ := v.([]any)
	var out []string
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Meta returns metadata.taskd, creating it. Writers use it to record state.
func Meta(t *taskfile.Task) *taskfile.Object {
	return t.EnsureMetadata().EnsureObject("taskd")
}

// Stamp formats a time for the task file.
func Stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Inherited are the metadata.taskd fields a child task takes from its
// parent unless it sets them itself (docs/configuration.md).
var Inherited = []string{"agent", "model", "cwd", "permissionMode", "tools", "disallowedTools", "timeout", "allowBypass", "worktree"}

// What an attempt whose tool calls were denied ends as
// (metadata.taskd.onDenied).
const (
	DeniedAsk  = "ask"  // needs_human: a person grants the tools or gives up
	DeniedFail = "fail" // failed
)

// Since returns when task t entered its state, as its file records it:
// the later of metadata.taskd.finishedAt and startedAt (a task run again
// keeps an old finishedAt), or the zero time if it records neither.
func Since(t *taskfile.Task) time.Time {
	var since time.Time
	m := t.Metadata.Object("taskd")
	for _, k := range []string{"finishedAt", "startedAt"} {
		if s, ok := m.String(k); ok {
			if at, err := time.Parse(time.RFC3339Nano, s); err == nil && at.After(since) {
				since = at
			}
		}
	}
	return since
}
