// Package config is taskd's configuration: the configuration file
// (FileConfig, checked strictly: an unknown field is an error), agent
// profiles and how agent names map to them, the subagent types, and the
// limits and defaults the daemon runs with (Config). docs/configuration.md
// documents every key.
package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
)

// FileConfig is the user's configuration file, by default
// $XDG_CONFIG_HOME/taskd/config.json (~/.config/taskd/config.json):
//
//	{"defaultAgent": "claude",
//	 "profiles": {"fast": {"command": ["claude", "-p", "--output-format", "json", "--model", "haiku"],
//	                       "prompt": "stdin", "env": ["ANTHROPIC_API_KEY"], "timeout": "10m",
//	                       "output": "claude-json"}},
//	 "agents": {"Developer": "claude", "Reviewer": "fast", "tester": "exec"},
//	 "concurrency": 2, "lists": {"nightly": {"concurrency": 1}}}
//
// Every field is optional. Unknown fields are errors, so a typo is reported
// instead of silently ignored.
type FileConfig struct {
	DefaultAgent string                 `json:"defaultAgent,omitempty"`
	Profiles     map[string]ProfileSpec `json:"profiles,omitempty"`
	Agents       map[string]string      `json:"agents,omitempty"`
	Concurrency  int                    `json:"concurrency,omitempty"`
	Lists        map[string]ListConfig  `json:"lists,omitempty"`
	// Timeout is the default agent timeout ("30m" unless set).
	Timeout string `json:"timeout,omitempty"`
	// Rescan is the period of the safety rescan ("5m" unless set).
	Rescan string `json:"rescan,omitempty"`
	// Grace is how long an agent has between SIGTERM and SIGKILL ("10s").
	Grace string `json:"grace,omitempty"`
	// OutputMaxMiB bounds each of an attempt's logs (stdout.log,
	// stderr.log, transcript.log): its first half and its last half are
	// kept, what is between is cut (32).
	OutputMaxMiB int `json:"outputMaxMiB,omitempty"`
	// AllowedRoots are directories /read may load files from, in addition
	// to the task's cwd and its list directory.
	AllowedRoots []string `json:"allowedRoots,omitempty"`
	// MaxDepth and MaxChildren bound trees of child tasks (3 and 10).
	MaxDepth    int `json:"maxDepth,omitempty"`
	MaxChildren int `json:"maxChildren,omitempty"`
	// AgentTypes override the default tools and permission modes of the
	// subagent types (agenttypes.go).
	AgentTypes map[string]AgentTypeSpec `json:"agentTypes,omitempty"`
	// Scheduling is the CPU scheduling policy of the daemon and, by
	// inheritance, its agents on Linux: "batch" (SCHED_BATCH, the
	// default) or "normal" (SCHED_OTHER, what the daemon was started
	// with). Applied by the taskd command, not by Daemon.
	Scheduling string `json:"scheduling,omitempty"`
	// Retention bounds what each list keeps of ended tasks (retention.go).
	Retention *RetentionSpec `json:"retention,omitempty"`
	// Notify is a command run when a task needs a person, fails, or
	// (if asked) succeeds (notify.go).
	Notify *NotifySpec `json:"notify,omitempty"`
	// GenericReturn is the instruction that ends the prompt of a parent
	// resumed with its children's results (docs/prompt-commands.md).
	GenericReturn string `json:"genericReturn,omitempty"`
	// NATS dispatches agent runs to workers on other machines (nats.go).
	NATS *NATS `json:"nats,omitempty"`
}

// ListConfig holds per-list settings.
type ListConfig struct {
	Concurrency int `json:"concurrency,omitempty"`
	// Cwd is where the list's tasks run when their file names no cwd.
	Cwd string `json:"cwd,omitempty"`
	// MaxTurns and MaxCostUSD bound each attempt of the list's tasks
	// that sets no budget of its own.
	MaxTurns   int     `json:"maxTurns,omitempty"`
	MaxCostUSD float64 `json:"maxCostUsd,omitempty"`
}

// ProfileSpec is an agent profile as written in the configuration file.
type ProfileSpec struct {
	Command []string `json:"command"`
	Prompt  string   `json:"prompt,omitempty"`  // "stdin" (default) or "arg"
	Env     []string `json:"env,omitempty"`     // variables passed through (NAME or PREFIX*) or set (NAME=value)
	Timeout string   `json:"timeout,omitempty"` // default timeout for this profile
	Output  string   `json:"output,omitempty"`  // "claude-json", "json" or "text" (default)
	// Flags says how task fields (model, permission mode, tools, system
	// prompt, session) become command-line flags: "claude", "opencode",
	// "codex" or "none". By default it follows the command's name.
	Flags string `json:"flags,omitempty"`
	// OnLimit says what a usage limit does to the profile's tasks:
	// "pause" (the default for claude, opencode and codex) or "fail"
	// (the default for other commands). LimitBackoff and LimitBackoffMax
	// bound the pause when the agent names no reset time ("1m", "1h").
	OnLimit         string `json:"onLimit,omitempty"`
	LimitBackoff    string `json:"limitBackoff,omitempty"`
	LimitBackoffMax string `json:"limitBackoffMax,omitempty"`
	// MaxTurns and MaxCostUSD bound each attempt of the profile's agent
	// that neither its task nor its list bounds.
	MaxTurns   int     `json:"maxTurns,omitempty"`
	MaxCostUSD float64 `json:"maxCostUsd,omitempty"`
}

// Defaults for settings the configuration file leaves out.
const (
	DefaultTimeout     = 30 * time.Minute
	DefaultRescan      = 5 * time.Minute
	DefaultGrace       = 10 * time.Second
	DefaultMaxDepth    = 3
	DefaultMaxChildren = 10
	// DefaultOutputMax bounds each of an attempt's logs.
	DefaultOutputMax = 32 << 20

	// The largest values the configuration accepts: a tree deeper or wider
	// than this is a mistake (or an attempt to exhaust the machine), not a
	// plan.
	MaxMaxDepth     = 32
	MaxMaxChildren  = 1000
	MaxConcurrency  = 1024
	MaxOutputMaxMiB = 1 << 20
)

// DefaultConfigPath returns $XDG_CONFIG_HOME/taskd/config.json, or
// ~/.config/taskd/config.json.
func DefaultConfigPath() string {
	return filepath.Join(DefaultDir(), "config.json")
}

// DefaultDir returns taskd's own configuration directory,
// $XDG_CONFIG_HOME/taskd or ~/.config/taskd: the configuration file, and
// the user's workflows/ and commands/.
func DefaultDir() string {
	home := os.Getenv("XDG_CONFIG_HOME")
	if home == "" {
		h, _ := os.UserHomeDir()
		home = filepath.Join(h, ".config")
	}
	return filepath.Join(home, "taskd")
}

// DefaultStateDir returns taskd's own state directory:
// $XDG_STATE_HOME/taskd, or ~/.local/state/taskd (home is ~), getenv
// reading the environment. It is outside the task root and outside
// ~/.claude, where Claude Code refuses every edit: the tasks' git
// worktrees are made there (docs/agents.md).
func DefaultStateDir(getenv func(string) string, home string) string {
	if s := getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		return filepath.Join(s, "taskd")
	}
	return filepath.Join(home, ".local", "state", "taskd")
}

// LoadFileConfig reads the configuration file at path. A missing file is not
// an error when optional is true (the default path); the settings are then
// all defaults. Errors name the file and, for bad values, the field. A
// file that is not a regular file (a FIFO) is refused, never waited on.
func LoadFileConfig(path string, optional bool) (*FileConfig, error) {
	data, err := fsroot.ReadRegular(path)
	if err != nil {
		if optional && errors.Is(err, fs.ErrNotExist) {
			return &FileConfig{}, nil
		}
		return nil, fmt.Errorf("read config: %w", err)
	}
	var fc FileConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("config %s: %s is %s, want %s: %w", path, te.Field, te.Value, wantOf(te.Type.Kind()), err)
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := fc.validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return &fc, nil
}

// wantOf says what a configuration value of kind k is, for errors.
func wantOf(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64:
		return "a whole number such as 3"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array"
	}
	return "an object"
}

func (fc *FileConfig) validate() error {
	for _, d := range []struct{ name, v string }{{"timeout", fc.Timeout}, {"rescan", fc.Rescan}, {"grace", fc.Grace}} {
		if d.v == "" {
			continue
		}
		if v, err := time.ParseDuration(d.v); err != nil || v <= 0 {
			return fmt.Errorf("%s %q is not a positive duration such as \"10m\"", d.name, d.v)
		}
	}
	if err := fc.Retention.validate(); err != nil {
		return err
	}
	switch fc.Scheduling {
	case "", SchedulingBatch, SchedulingNormal:
	default:
		return fmt.Errorf("scheduling %q is neither %q nor %q", fc.Scheduling, SchedulingBatch, SchedulingNormal)
	}
	for _, b := range []struct {
		name string
		v    int
		max  int
	}{{"concurrency", fc.Concurrency, MaxConcurrency}, {"maxDepth", fc.MaxDepth, MaxMaxDepth}, {"maxChildren", fc.MaxChildren, MaxMaxChildren},
		{"outputMaxMiB", fc.OutputMaxMiB, MaxOutputMaxMiB}} {
		if b.v < 0 || b.v > b.max {
			return fmt.Errorf("%s is %d; it must be between 1 and %d (0 or absent: the default)", b.name, b.v, b.max)
		}
	}
	for name, p := range fc.Profiles {
		if err := p.validate(); err != nil {
			return fmt.Errorf("profile %q: %w", name, err)
		}
	}
	profiles := fc.profiles()
	for agent, prof := range fc.Agents {
		if _, ok := profiles[prof]; !ok {
			return fmt.Errorf("agents: %q maps to unknown profile %q (known: %s)", agent, prof, strings.Join(slices.Sorted(maps.Keys(profiles)), ", "))
		}
	}
	if fc.DefaultAgent != "" {
		if _, ok := profiles[fc.DefaultAgent]; !ok {
			if _, ok := fc.Agents[fc.DefaultAgent]; !ok {
				return fmt.Errorf("defaultAgent %q is not a profile or a mapped agent", fc.DefaultAgent)
			}
		}
	}
	for id, l := range fc.Lists {
		if l.Concurrency < 0 || l.Concurrency > MaxConcurrency {
			return fmt.Errorf("lists.%s.concurrency is %d; it must be between 1 and %d (0 or absent: the global cap)", id, l.Concurrency, MaxConcurrency)
		}
		if err := validateBudget(l.MaxTurns, l.MaxCostUSD); err != nil {
			return fmt.Errorf("lists.%s: %w", id, err)
		}
	}
	if err := fc.Notify.validate(); err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	if err := fc.NATS.validate(); err != nil {
		return err
	}
	return validateAgentTypes(fc.AgentTypes)
}

// Config is the daemon's complete configuration: where to look and how to
// run agents. Build it with NewConfig; the zero value is not usable.
type Config struct {
	Root       string   // the root of task lists
	Lists      []string // if not empty, only these lists are watched
	Insecure   bool     // run even if the root is writable by others
	ConfigPath string   // the configuration file read, for messages
	// Dir is taskd's configuration directory, where the user's
	// workflows/ and commands/ are (DefaultDir unless set).
	Dir string
	// Home is the user's home directory: a task's working directory when
	// it names none, what ~ means in paths, and where /read's secrets are
	// (os.UserHomeDir unless set).
	Home string
	// OtherHomes returns the other users' homes, which /read never loads
	// from; nil: the user database's (readable.OtherHomes).
	OtherHomes func(home string) []string
	// StateDir is taskd's own state directory, where the tasks' git
	// worktrees are made (DefaultStateDir unless set).
	StateDir string

	DefaultAgent string
	Profiles     map[string]*Profile
	Agents       map[string]string
	Concurrency  int
	ListLimits   map[string]int
	// ListSettings holds each list's settings (cwd, budget) by list id.
	ListSettings map[string]ListConfig
	// Notify is the notification command, or nil (notify.go).
	Notify  *Notify
	Timeout time.Duration
	Rescan  time.Duration
	Grace   time.Duration
	// OutputMax bounds each of an attempt's logs, in bytes.
	OutputMax    int64
	AllowedRoots []string
	MaxDepth     int
	MaxChildren  int
	AgentTypes   map[string]*AgentType // subagent types by name (agenttypes.go)
	Retention    Retention             // what each list keeps of ended tasks

	// Scheduling is the CPU scheduling policy the taskd command gives the
	// daemon process: SchedulingBatch or SchedulingNormal.
	Scheduling string

	// Executable is the path of the taskd binary agents find on PATH.
	Executable string

	// GenericReturn ends the prompt of a resumed parent, after its
	// children's results; "" for the built-in one.
	GenericReturn string

	// NATS is the configuration's nats section, nil if it has none.
	NATS *NATS
}

// The scheduling policies of FileConfig.Scheduling.
const (
	SchedulingBatch  = "batch"
	SchedulingNormal = "normal"
)

// NewConfig combines the root and the configuration file into a Config.
func NewConfig(root string, lists []string, fc *FileConfig) (*Config, error) {
	if fc == nil {
		fc = &FileConfig{}
	}
	c := &Config{
		Root:          root,
		Lists:         lists,
		DefaultAgent:  fc.DefaultAgent,
		Agents:        fc.Agents,
		Concurrency:   fc.Concurrency,
		ListLimits:    map[string]int{},
		ListSettings:  fc.Lists,
		Timeout:       durationOr(fc.Timeout, DefaultTimeout),
		Rescan:        durationOr(fc.Rescan, DefaultRescan),
		Grace:         durationOr(fc.Grace, DefaultGrace),
		OutputMax:     int64(cmp.Or(fc.OutputMaxMiB, DefaultOutputMax>>20)) << 20,
		AllowedRoots:  fc.AllowedRoots,
		MaxDepth:      fc.MaxDepth,
		MaxChildren:   fc.MaxChildren,
		AgentTypes:    compileAgentTypes(fc.AgentTypes),
		Scheduling:    fc.Scheduling,
		Retention:     fc.Retention.retention(),
		Dir:           DefaultDir(),
		GenericReturn: strings.TrimSpace(fc.GenericReturn),
		NATS:          fc.NATS,
	}
	c.Home, _ = os.UserHomeDir()
	c.StateDir = DefaultStateDir(os.Getenv, c.Home)
	if c.Scheduling == "" {
		c.Scheduling = SchedulingBatch
	}
	if c.DefaultAgent == "" {
		c.DefaultAgent = "claude"
	}
	if c.Concurrency == 0 {
		c.Concurrency = runtime.NumCPU()
	}
	if c.MaxDepth == 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	if c.MaxChildren == 0 {
		c.MaxChildren = DefaultMaxChildren
	}
	for id, l := range fc.Lists {
		if l.Concurrency > 0 {
			c.ListLimits[id] = l.Concurrency
		}
	}
	c.Notify = fc.Notify.compile()
	c.Profiles = map[string]*Profile{}
	for name, spec := range fc.profiles() {
		p, err := spec.compile(name)
		if err != nil {
			return nil, err
		}
		c.Profiles[name] = p
	}
	if exe, err := os.Executable(); err == nil {
		c.Executable = exe
	}
	return c, nil
}

func durationOr(s string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d
	}
	return def
}
