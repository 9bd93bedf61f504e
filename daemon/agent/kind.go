package agent

import (
	"fmt"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/config"
)

// A Kind is one kind of agent program — claude, codex, opencode, a shell
// command — and everything taskd does differently for it: the flags its
// command line gets from a task, the reading of its output and progress,
// the recognition of its usage limits, the continuing of its sessions,
// what the configuration knows of it. Each kind is one implementation, in
// a file of its own, registered with Register; nothing else tells kinds
// apart. A profile's "flags" names its kind.
type Kind interface {
	// Config is what the configuration knows of the kind: its name, the
	// programs that are of it, whether it runs a model, its built-in
	// profiles. (Its Outputs are those of Formats.)
	Config() config.Kind
	// Formats are the output formats of the kind's own.
	Formats() []Format
	// Args appends to argv, the profile's command, the flags that carry
	// attempt a's task fields (a.Spec: model, permission mode, tools,
	// system prompt), its budget (when BoundsTurns) and its session
	// (a.Resume, a.Fork, a.Session).
	Args(argv []string, a *Attempt) []string
	// BoundsTurns reports whether the agent stops itself at its budget's
	// turns, given by Args; if not, the count of its stream is enforced.
	BoundsTurns() bool
	// Sessions is how the kind's sessions are continued; nil: they are
	// not, and an attempt that would continue one starts over.
	Sessions() Sessions
	// Limit returns the usage limit an attempt's output reports, or nil:
	// st is what its stream said (nil if it did not stream), texts the
	// ends of its plain output and of its standard error, now the time a
	// reset time of day is read against.
	Limit(st *Stream, texts []string, now time.Time) *Limit
	// CredentialsFix says how the daemon's user service gets the agent's
	// credentials (taskd doctor --agents); docs names the page on the
	// service's environment.
	CredentialsFix(docs string) string
}

// A Format is one output format of a kind, a profile's "output": either a
// stream of JSON lines, read as the agent runs (Line), or output read
// when it has exited (End).
type Format struct {
	Name string
	// Line reads one line of a stream into s and returns what the
	// transcript shows of it (docs/agents.md).
	Line StreamParser
	// End reads the output of an agent that has exited with exitCode; it
	// reports false when the output is not of the format, and it is then
	// read as plain text.
	End func(stdout []byte, exitCode int) (Result, bool)
}

// A StreamParser reads one line of a streamed format: it updates the
// Stream and returns what the transcript shows of the line.
type StreamParser func(line []byte, s *Stream) []string

// Sessions is how a kind's sessions are continued.
type Sessions interface {
	// NewID returns an id for a new session, given to the agent when it
	// starts (Args: a.Session), or "" when the agent names its own.
	NewID() string
	// Kept reports whether session's conversation is kept where attempt
	// a's agent will look for it when told to continue it.
	Kept(a *Attempt, session string) bool
}

// A ToolCounter is a Kind whose agent's own records of a session say how
// many tools it invoked, for a result whose report does not: env is the
// agent's environment, since when its attempt started.
type ToolCounter interface {
	CountTools(env []string, session string, since time.Time) (int, bool)
}

// registry holds the registered kinds and their formats.
var registry = struct {
	sync.RWMutex
	kinds   map[string]Kind
	formats map[string]Format
	owners  map[string]Kind // the kind of each format
}{kinds: map[string]Kind{}, formats: map[string]Format{}, owners: map[string]Kind{}}

// Register adds kind k, and tells the configuration of it
// (config.RegisterKind). It panics when k's name or one of its formats
// is already registered: a kind is registered once, when the program
// starts (the built-in kinds by this package).
func Register(k Kind) {
	c := k.Config()
	c.Outputs = nil
	for _, f := range k.Formats() {
		if (f.Line == nil) == (f.End == nil) {
			panic(fmt.Sprintf("agent: format %q of kind %q must have one of Line and End", f.Name, c.Name))
		}
		c.Outputs = append(c.Outputs, f.Name)
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.kinds[c.Name]; dup {
		panic(fmt.Sprintf("agent: kind %q registered twice", c.Name))
	}
	config.RegisterKind(c)
	registry.kinds[c.Name] = k
	for _, f := range k.Formats() {
		registry.formats[f.Name] = f
		registry.owners[f.Name] = k
	}
}

// KindOf returns the kind of profile p, or nil when p is nil or names no
// registered kind.
func KindOf(p *config.Profile) Kind {
	if p == nil {
		return nil
	}
	registry.RLock()
	defer registry.RUnlock()
	return registry.kinds[p.Flags]
}

// formatNamed returns the registered format of that name.
func formatNamed(name string) (Format, bool) {
	registry.RLock()
	defer registry.RUnlock()
	f, ok := registry.formats[name]
	return f, ok
}

// toolCounterOf returns what counts the tools of profile p's sessions:
// its kind, or the kind whose output format it reads (a script that runs
// claude and prints its stream), if either is a ToolCounter.
func toolCounterOf(p *config.Profile) ToolCounter {
	if tc, ok := KindOf(p).(ToolCounter); ok {
		return tc
	}
	registry.RLock()
	defer registry.RUnlock()
	tc, _ := registry.owners[p.Output].(ToolCounter)
	return tc
}

// parserFor returns the reader of a streamed output format, or nil.
func parserFor(output string) StreamParser {
	f, _ := formatNamed(output)
	return f.Line
}

// IsStream reports whether output names a streamed format.
func IsStream(output string) bool { return parserFor(output) != nil }

// IsModel reports whether profile p runs a model, whose answer is read,
// rather than a program whose exit status is its result.
func IsModel(p *config.Profile) bool {
	if p == nil {
		return false
	}
	k := KindOf(p)
	return k == nil || k.Config().Model
}

// CanResume reports whether the agent of profile p can continue a
// session of its own.
func CanResume(p *config.Profile) bool {
	k := KindOf(p)
	return k != nil && k.Sessions() != nil
}

// NewSession returns the id a new session of profile p's agent is given
// when it starts, or "" if it names its own or has none.
func NewSession(p *config.Profile) string {
	if k := KindOf(p); k != nil && k.Sessions() != nil {
		return k.Sessions().NewID()
	}
	return ""
}

// boundsTurns reports whether a's agent stops itself at its budget's
// turns.
func (a *Attempt) boundsTurns() bool {
	k := KindOf(a.Profile)
	return k != nil && k.BoundsTurns()
}

// findLimitOf returns the usage limit attempt a's output reports, as its
// kind recognises one (FindLimit for a profile of no kind).
func (a *Attempt) findLimitOf(st *Stream, texts []string, now time.Time) *Limit {
	if k := KindOf(a.Profile); k != nil {
		return k.Limit(st, texts, now)
	}
	return FindLimit(st, texts, now)
}
