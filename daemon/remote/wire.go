package remote

import (
	"encoding/hex"
	"regexp"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
)

// The subjects and streams (prefix p, "taskd" by default):
//
//	p.work.<profile>.<id>   a Work; stream P_WORK, a work queue: each message
//	                        goes to one worker and is removed once acknowledged
//	p.run.<id>.start        a Start: a worker is about to start the agent
//	p.run.<id>.started      a Started: the agent runs (its cmd.json)
//	p.run.<id>.out, .err    the bytes the agent wrote, in order, with the
//	                        offset of the first in the Taskd-Offset header
//	p.run.<id>.end          an End: how the attempt ended (one per attempt:
//	                        its Nats-Msg-Id is <id>.end)
//	p.run.<id>.cancel       a Cancel from the coordinator
//
// The run subjects are in stream P_RUNS, kept for RunsMaxAge, so that what
// a worker reported while the coordinator was away is there when it
// comes back. <profile> is the profile's name, hex-encoded (with an "x"
// before it) if it is not made of letters, digits, - and _.

// Names of the streams and subjects for prefix p.
func workStream(p string) string               { return strings.ToUpper(p) + "_WORK" }
func runsStream(p string) string               { return strings.ToUpper(p) + "_RUNS" }
func workSubject(p, profile, id string) string { return p + ".work." + Token(profile) + "." + id }
func runSubject(p, id, kind string) string     { return p + ".run." + id + "." + kind }

// WorkFilter is the subject filter of profile's work, for its consumer.
func WorkFilter(p, profile string) string { return p + ".work." + Token(profile) + ".*" }

// WorkConsumer is the durable consumer of profile's work, shared by every
// worker that serves the profile.
func WorkConsumer(profile string) string { return "work-" + Token(profile) }

// The kinds of run subjects.
const (
	KindStart   = "start"
	KindStarted = "started"
	KindOut     = "out"
	KindErr     = "err"
	KindEnd     = "end"
	KindCancel  = "cancel"
)

// OffsetHeader carries the offset of an output chunk's first byte.
const OffsetHeader = "Taskd-Offset"

// RunsMaxAge is how long the runs stream keeps what workers report: a
// coordinator away for longer than this finds its attempts interrupted.
const RunsMaxAge = 7 * 24 * time.Hour

// dedupWindow is how long JetStream remembers a message id: a second End
// of an attempt (from a worker that came back after its attempt was
// declared lost) within it is dropped by the server.
const dedupWindow = 30 * time.Minute

// MaxChunk bounds one output message.
const MaxChunk = 64 << 10

var plainToken = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Token is name as one subject token (and part of a consumer name).
func Token(name string) string {
	if plainToken.MatchString(name) && !strings.HasPrefix(name, "x") {
		return name
	}
	return "x" + hex.EncodeToString([]byte(name))
}

// Work is an attempt as published to the work stream: what a worker needs
// to run it as agent.Local would here. Only names of environment
// variables travel (the profile's allow-list); a worker takes their values
// from its own environment.
type Work struct {
	ID      string            `json:"id"`
	Root    string            `json:"root"`    // the coordinator's root of lists
	ListDir string            `json:"listDir"` // the coordinator's list directory
	List    string            `json:"list"`
	Task    string            `json:"task"`
	Parent  string            `json:"parent,omitempty"`
	N       int               `json:"attempt"`
	Sub     string            `json:"sub,omitempty"`
	Step    string            `json:"step,omitempty"`
	Profile Profile           `json:"profile"`
	Prompt  string            `json:"prompt"`
	Script  string            `json:"script,omitempty"`
	Cwd     string            `json:"cwd"`
	Repo    string            `json:"repo,omitempty"`
	Ref     string            `json:"ref,omitempty"`
	Timeout Duration          `json:"timeout"`
	Flags   Flags             `json:"flags"`
	Resume  string            `json:"resume,omitempty"`
	Fork    bool              `json:"fork,omitempty"`
	Env     map[string]string `json:"env,omitempty"`   // taskd's extra variables (TASKD_RESULTS, …)
	Files   map[string][]byte `json:"files,omitempty"` // extra run-folder files (transcript.json)
	// OutputMax bounds each of the attempt's logs on the worker, in bytes
	// (the coordinator's outputMaxMiB); 0: the worker's default.
	OutputMax int64     `json:"outputMax,omitempty"`
	Sent      time.Time `json:"sent"`
}

// Profile is a config.Profile on the wire.
type Profile struct {
	Name    string   `json:"name"`
	Command []string `json:"command"`
	Prompt  string   `json:"prompt"`
	Env     []string `json:"env,omitempty"`
	Output  string   `json:"output"`
	Flags   string   `json:"flags"`
}

// Flags are the task fields that become command-line flags.
type Flags struct {
	Model          string   `json:"model,omitempty"`
	PermissionMode string   `json:"permissionMode,omitempty"`
	Tools          []string `json:"tools,omitempty"`
	DisallowTools  []string `json:"disallowedTools,omitempty"`
	SystemPrompt   string   `json:"systemPrompt,omitempty"`
}

// Duration is a time.Duration written as a string ("30m0s").
type Duration time.Duration

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// ProfileOf is p on the wire.
func ProfileOf(p *config.Profile) Profile {
	return Profile{Name: p.Name, Command: p.Command, Prompt: p.Prompt, Env: p.Env, Output: p.Output, Flags: p.Flags}
}

// Config is the profile as a config.Profile.
func (p Profile) Config() *config.Profile {
	return &config.Profile{Name: p.Name, Command: p.Command, Prompt: p.Prompt, Env: p.Env, Output: p.Output, Flags: p.Flags}
}

// Start says a worker is about to start an attempt's agent. It is
// published (and stored) before the agent starts: an attempt delivered
// again with a Start and no End was cut short.
type Start struct {
	Worker string    `json:"worker"`
	At     time.Time `json:"at"`
}

// Started says the agent runs: when it started, and the worker's cmd.json
// (argv, cwd, environment names, process group).
type Started struct {
	Worker string         `json:"worker"`
	At     time.Time      `json:"at"`
	Cmd    map[string]any `json:"cmd"`
}

// End is how an attempt ended. Outcome is one of the outcome names
// (OutcomeName); Result is the attempt's result.json.
type End struct {
	Worker  string       `json:"worker"`
	List    string       `json:"list"`
	Task    string       `json:"task"`
	N       int          `json:"attempt"`
	Sub     string       `json:"sub,omitempty"`
	Outcome string       `json:"outcome"`
	Result  agent.Result `json:"result"`
	// Stdout and Stderr are how many bytes of output the worker sent.
	Stdout int64 `json:"stdout"`
	Stderr int64 `json:"stderr"`
}

// Cancel asks the worker running an attempt to stop it; Reason is
// "cancelled" (the task was cancelled or removed) or "interrupted".
type Cancel struct {
	Reason string `json:"reason"`
}

// The outcome names of End.
var outcomeNames = map[agent.Outcome]string{
	agent.Finished: "finished", agent.TimedOut: "timed_out", agent.Cancelled: "cancelled",
	agent.Interrupted: "interrupted", agent.NotStarted: "not_started",
}

// OutcomeName is out's name in an End.
func OutcomeName(out agent.Outcome) string { return outcomeNames[out] }

// OutcomeFrom is the outcome an End names (interrupted if unknown).
func OutcomeFrom(name string) agent.Outcome {
	for o, n := range outcomeNames {
		if n == name {
			return o
		}
	}
	return agent.Interrupted
}

// AttemptOfSubject is the attempt id of a run subject of prefix p ("" if
// subject is none).
func AttemptOfSubject(p, subject string) string {
	rest, ok := strings.CutPrefix(subject, p+".run.")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, ".")
	return id
}
