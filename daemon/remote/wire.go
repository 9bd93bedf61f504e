package remote

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// The subjects, streams and keys of prefix p ("taskd" by default; P is p
// in capitals):
//
//	p.work.<profile>.<labels>.<id>  a Work, signed by the coordinator; stream
//	                                P_WORK, a work queue: each message goes to
//	                                one worker and is removed once it is
//	                                acknowledged (when the worker has claimed
//	                                the attempt)
//	p.run.<id>.start                a Start: a worker claims the attempt (the
//	                                first one stored wins)
//	p.run.<id>.started              a Started: the agent runs (its cmd.json)
//	p.run.<id>.out, .err            the bytes the agent wrote, in order, with
//	                                the offset of the first in Taskd-Offset
//	p.run.<id>.end                  an End: how the attempt ended (one per
//	                                attempt: its Nats-Msg-Id is <id>.end)
//	p.run.<id>.cancel               a Cancel, signed by the coordinator
//	$KV.P_POOL.workers.<key>        a worker's Heartbeat, under its public key
//	$KV.P_POOL.coordinator          the coordinator's Lock
//
// Everything a worker publishes is signed with its key. The run subjects
// are in stream P_RUNS, kept for RunsMaxAge, so that what a worker
// reported while the coordinator was away is there when it comes back.
// <profile> is the profile's name, hex-encoded (with an "x" before it) if
// it is not made of letters, digits, - and _; <labels> is "-" for an
// attempt that asks for no labels, else its labels sorted and joined by
// "+".

// Names of the streams, the bucket and the subjects for prefix p.
func workStream(p string) string { return strings.ToUpper(p) + "_WORK" }
func runsStream(p string) string { return strings.ToUpper(p) + "_RUNS" }
func poolBucket(p string) string { return strings.ToUpper(p) + "_POOL" }
func runSubject(p, id, kind string) string {
	return p + ".run." + id + "." + kind
}

// RunSubject is the run subject kind of attempt id.
func RunSubject(p, id, kind string) string { return runSubject(p, id, kind) }

// WorkSubject is the subject of attempt id of profile, asking for labels.
func WorkSubject(p, profile string, labels []string, id string) string {
	return p + ".work." + Token(profile) + "." + LabelsToken(labels) + "." + id
}

// WorkFilter is the subject filter of the work of profile that asks for
// exactly labels, for its consumer.
func WorkFilter(p, profile string, labels []string) string {
	return p + ".work." + Token(profile) + "." + LabelsToken(labels) + ".*"
}

// WorkConsumer is the durable consumer of the work of profile that asks
// for exactly labels, shared by every worker that serves the profile and
// has the labels: "work-<profile>", and "+<label>" for each label.
func WorkConsumer(profile string, labels []string) string {
	name := "work-" + Token(profile)
	if len(labels) > 0 {
		name += "+" + strings.Join(sortedLabels(labels), "+")
	}
	return name
}

// ParseWorkConsumer is the profile token and labels of a consumer that
// WorkConsumer names; ok is false for any other name.
func ParseWorkConsumer(name string) (profileToken string, labels []string, ok bool) {
	rest, ok := strings.CutPrefix(name, "work-")
	if !ok || rest == "" {
		return "", nil, false
	}
	parts := strings.Split(rest, "+")
	for _, l := range parts[1:] {
		if !ValidLabel(l) {
			return "", nil, false
		}
	}
	return parts[0], parts[1:], plainToken.MatchString(parts[0])
}

// WorkStream is the name of prefix p's work stream.
func WorkStream(p string) string { return workStream(p) }

// HeartbeatSubject is the subject of the heartbeat of the worker whose
// public key is key: its entry in the pool bucket.
func HeartbeatSubject(p, key string) string { return "$KV." + poolBucket(p) + ".workers." + key }

// lockKey is the key of the coordinator's lock in the pool bucket.
const lockKey = "coordinator"

// CoordinatorInbox and WorkerInbox are the prefixes of the reply subjects
// of prefix p's coordinator and of worker name: a user of one role need
// not (and should not) be allowed to read the other's replies.
func CoordinatorInbox(p string) string  { return "_INBOX." + p + ".coordinator" }
func WorkerInbox(p, name string) string { return "_INBOX." + p + ".worker." + Token(name) }

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
// coordinator away for longer than this finds its attempts lost. A work
// message signed longer ago than this is refused by workers.
const RunsMaxAge = 7 * 24 * time.Hour

// dedupWindow is how long JetStream remembers a message id: a second End
// of an attempt within it is dropped by the server.
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

// ValidLabel and CheckLabels are task's rules for labels.
var (
	ValidLabel  = task.ValidLabel
	CheckLabels = task.CheckLabels
)

// LabelsToken is labels as one subject token: "-" for none.
func LabelsToken(labels []string) string {
	if len(labels) == 0 {
		return "-"
	}
	return strings.Join(sortedLabels(labels), "+")
}

func sortedLabels(labels []string) []string {
	s := slices.Clone(labels)
	slices.Sort(s)
	return slices.Compact(s)
}

// Work is an attempt as published to the work stream: what a worker needs
// to run it as agent.Local would here. It names a profile, which the
// worker defines: no command line travels. Only names of environment
// variables are the profile's business; the values come from the worker's
// environment. It is signed by the coordinator (sign.go).
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
	Profile string            `json:"profile"`
	Labels  []string          `json:"labels,omitempty"`
	Prompt  string            `json:"prompt"`
	Script  string            `json:"script,omitempty"`
	Cwd     string            `json:"cwd"`
	Repo    string            `json:"repo,omitempty"`
	Ref     string            `json:"ref,omitempty"`
	Timeout Duration          `json:"timeout"`
	Flags   Flags             `json:"flags"`
	Budget  Budget            `json:"budget,omitzero"`
	Session string            `json:"session,omitempty"` // a new session's id (claude --session-id)
	Resume  string            `json:"resume,omitempty"`
	Fork    bool              `json:"fork,omitempty"`
	Env     map[string]string `json:"env,omitempty"`   // taskd's extra variables (TASKD_RESULTS, …): TASKD_* only
	Files   map[string][]byte `json:"files,omitempty"` // extra run-folder files (transcript.json)
	// OutputMax bounds each of the attempt's logs on the worker, in bytes
	// (the coordinator's outputMaxMiB); 0: the worker's default.
	OutputMax int64     `json:"outputMax,omitempty"`
	Sent      time.Time `json:"sent"`
}

// Flags are the task fields that become command-line flags of the
// profiles that take them.
type Flags struct {
	Model          string   `json:"model,omitempty"`
	PermissionMode string   `json:"permissionMode,omitempty"`
	Tools          []string `json:"tools,omitempty"`
	DisallowTools  []string `json:"disallowedTools,omitempty"`
	SystemPrompt   string   `json:"systemPrompt,omitempty"`
}

// Budget is what the attempt may spend (agent.Budget).
type Budget struct {
	MaxTurns   int     `json:"maxTurns,omitempty"`
	MaxCostUSD float64 `json:"maxCostUsd,omitempty"`
}

// Duration is a time.Duration written as a string ("30m0s").
type Duration time.Duration

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// Check checks what a worker must not take on trust from a work message
// that arrived on subject: its id is the subject's, a plain name; its
// extra variables are taskd's; its files' names are plain names.
func (w *Work) Check(subject string) error {
	if !plainID.MatchString(w.ID) || !strings.HasSuffix(subject, "."+w.ID) {
		return fmt.Errorf("attempt id %q does not match subject %s", w.ID, subject)
	}
	for k := range w.Env {
		if !strings.HasPrefix(k, "TASKD_") || !envName.MatchString(k) {
			return fmt.Errorf("variable %q is none of taskd's", k)
		}
	}
	for name := range w.Files {
		if err := fsroot.CheckName(name); err != nil {
			return fmt.Errorf("file %q: %w", name, err)
		}
	}
	if w.N <= 0 || w.Task == "" || w.List == "" {
		return fmt.Errorf("it names no task and attempt")
	}
	if !taskfile.ValidID(w.Task) {
		return fmt.Errorf("task %q is not a task id", w.Task)
	}
	if w.Sub != "" {
		if err := fsroot.CheckName(w.Sub); err != nil {
			return fmt.Errorf("sub-folder %q: %w", w.Sub, err)
		}
	}
	return CheckLabels(w.Labels)
}

var (
	plainID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// PlainID reports whether s is a plain attempt id: letters, digits, - and
// _, at most 64.
func PlainID(s string) bool { return plainID.MatchString(s) }

// Start says a worker claims an attempt. It is published with
// Nats-Expected-Last-Subject-Sequence 0: of two workers the first stored
// wins. Boot is the worker process's own random id: a heartbeat with
// another boot says the process that claimed it is gone.
type Start struct {
	Worker string    `json:"worker"`
	Boot   string    `json:"boot"`
	Seq    uint64    `json:"seq"` // the worker's last heartbeat before the claim
	Host   string    `json:"host,omitempty"`
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

// Cancel asks the worker running an attempt to stop it. Reason is
// CancelReason (the task was cancelled or removed) or LostReason (the
// coordinator recorded the attempt lost: its worker went silent).
type Cancel struct {
	Reason string `json:"reason"`
}

// The reasons of a Cancel.
const (
	CancelReason = "cancelled"
	LostReason   = "lost"
)

// A Heartbeat is what a worker says of itself, every interval, under its
// key in the pool bucket: who it is, what it serves, and the attempts it
// holds. Boot changes with every start of the process; Seq grows with
// every heartbeat of one boot.
type Heartbeat struct {
	Name     string        `json:"name"`
	Host     string        `json:"host"`
	Version  string        `json:"version"`
	Boot     string        `json:"boot"`
	Seq      uint64        `json:"seq"`
	Interval Duration      `json:"interval"`
	Profiles []string      `json:"profiles"`
	Labels   []string      `json:"labels,omitempty"`
	Slots    int           `json:"slots"`
	Attempts []HeldAttempt `json:"attempts,omitempty"`
	Draining bool          `json:"draining,omitempty"`
	Stopped  bool          `json:"stopped,omitempty"` // its last: the worker has exited
	At       time.Time     `json:"at"`
}

// HeldAttempt is an attempt a worker holds: claimed, its agent running,
// or its end not yet stored.
type HeldAttempt struct {
	ID      string    `json:"id"`
	List    string    `json:"list"`
	Task    string    `json:"task"`
	N       int       `json:"attempt"`
	Profile string    `json:"profile"`
	State   string    `json:"state"` // "preparing", "running" or "ending"
	Since   time.Time `json:"since"`
}

// Holds reports whether h lists attempt id.
func (h *Heartbeat) Holds(id string) bool {
	return slices.ContainsFunc(h.Attempts, func(a HeldAttempt) bool { return a.ID == id })
}

// Serves reports whether h serves profile and has every label of labels.
func (h *Heartbeat) Serves(profile string, labels []string) bool {
	if !slices.Contains(h.Profiles, profile) {
		return false
	}
	for _, l := range labels {
		if !slices.Contains(h.Labels, l) {
			return false
		}
	}
	return true
}

// Lock is the coordinator's hold on a prefix: one coordinator per prefix.
type Lock struct {
	Host string    `json:"host"`
	Root string    `json:"root"`
	PID  int       `json:"pid"`
	Key  string    `json:"key"` // the coordinator's public key
	Boot string    `json:"boot"`
	At   time.Time `json:"at"`
}

// same reports whether l and o are held by the same coordinator: the same
// root on the same host with the same key (a restarted coordinator).
func (l Lock) same(o Lock) bool { return l.Host == o.Host && l.Root == o.Root && l.Key == o.Key }

func (l Lock) String() string {
	return fmt.Sprintf("the coordinator of %s on %s (pid %d)", l.Root, l.Host, l.PID)
}

// The outcome names of End.
var outcomeNames = map[agent.Outcome]string{
	agent.Finished: "finished", agent.TimedOut: "timed_out", agent.Cancelled: "cancelled",
	agent.Interrupted: "interrupted", agent.NotStarted: "not_started", agent.OverBudget: "over_budget",
	agent.Paused: "paused",
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

// kindOf is the kind of a run subject.
func kindOf(subject string) string { return subject[strings.LastIndexByte(subject, '.')+1:] }
