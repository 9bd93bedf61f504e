// Package kindtest is the conformance suite of agent kinds (agent.Kind):
// every kind — the built-in ones and any a program adds — passes Run, which
// checks what the rest of taskd relies on without knowing the kind: that
// the configuration knows it and compiles its profiles to it, that its
// command line keeps the profile's command and carries the task's session
// and budget, that each of its formats reads a run's output into the
// result its agent reported, and never fails on a line it does not know,
// and that it recognises a usage limit.
package kindtest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
)

// A Sample is what a kind's agent printed in runs of its own, for the
// suite to read.
type Sample struct {
	// Outputs hold, for each of the kind's formats, by name, what its
	// agent printed on stdout in a run that ended with the report
	// {"success": true, "summary": Summary}.
	Outputs map[string]string
	// Session is the session those outputs name ("" for none).
	Session string
	Summary string
	// Limit is a line the agent prints when it meets a usage limit.
	Limit string
}

// junk are lines no format may fail on or take a session from.
var junk = []string{"", "not json", "{}", "[1, 2]", `{"type": null}`, `{"type": 7, "session_id": 8}`, `{"type":"result"`, "\x00\xff", strings.Repeat("{", 1000)}

// Run checks kind k, registered with agent.Register, against sample s.
func Run(t *testing.T, k agent.Kind, s Sample) {
	t.Helper()
	c := k.Config()
	if c.Name == "" {
		t.Fatal("the kind has no name")
	}
	prof := &config.Profile{Name: "p", Command: []string{"/bin/agent", "--fixed"}, Flags: c.Name}
	if agent.KindOf(prof) != k {
		t.Fatalf("a profile with flags %q is not of the kind: is it registered?", c.Name)
	}
	t.Run("config", func(t *testing.T) { checkConfig(t, k) })
	t.Run("args", func(t *testing.T) { checkArgs(t, k, prof) })
	t.Run("formats", func(t *testing.T) { checkFormats(t, k, s) })
	t.Run("limit", func(t *testing.T) { checkLimit(t, k, s) })
	if docs := "docs/service.md"; !strings.Contains(k.CredentialsFix(docs), docs) {
		t.Errorf("CredentialsFix(%q) = %q, which does not name the page", docs, k.CredentialsFix(docs))
	}
}

// checkConfig: the configuration compiles the kind's built-in profiles,
// and profiles running its programs, to profiles of the kind, and knows
// its formats.
func checkConfig(t *testing.T, k agent.Kind) {
	c := k.Config()
	specs := map[string]config.ProfileSpec{}
	for i, prog := range c.Programs {
		specs["prog"+string(rune('a'+i))] = config.ProfileSpec{Command: []string{"/opt/bin/" + prog, "-x"}}
	}
	for _, f := range k.Formats() {
		specs["format-"+f.Name] = config.ProfileSpec{Command: []string{"/bin/true"}, Flags: c.Name, Output: f.Name}
	}
	cfg, err := config.NewConfig(t.TempDir(), nil, &config.FileConfig{Profiles: specs})
	if err != nil {
		t.Fatalf("the configuration refuses the kind's profiles: %v", err)
	}
	for name := range c.Profiles {
		p := cfg.Profiles[name]
		if p == nil {
			t.Errorf("built-in profile %q is not in the configuration", name)
			continue
		}
		if agent.KindOf(p) != k {
			t.Errorf("built-in profile %q is of kind %q, want %q", name, p.Flags, c.Name)
		}
		if !slices.Contains(config.BuiltinProfiles(), name) {
			t.Errorf("BuiltinProfiles() lacks %q", name)
		}
	}
	for name := range specs {
		if p := cfg.Profiles[name]; agent.KindOf(p) != k {
			t.Errorf("profile %s (%v) is of kind %q, want %q", name, p.Command, p.Flags, c.Name)
		}
	}
	for name, p := range cfg.Profiles {
		if agent.KindOf(p) == k && p.PauseOnLimit != c.Model {
			t.Errorf("profile %s: PauseOnLimit %v by default, want %v (the kind runs a model: %v)", name, p.PauseOnLimit, c.Model, c.Model)
		}
		if agent.KindOf(p) == k && agent.IsModel(p) != c.Model {
			t.Errorf("profile %s: IsModel %v, want %v", name, agent.IsModel(p), c.Model)
		}
	}
}

// checkArgs: the command line begins with the profile's command, never
// carries the prompt, and carries the session and budget the kind says it
// takes.
func checkArgs(t *testing.T, k agent.Kind, prof *config.Profile) {
	attempt := func() *agent.Attempt {
		return &agent.Attempt{Profile: prof, Prompt: "PROMPT-TEXT", Script: "SCRIPT-TEXT", Cwd: t.TempDir()}
	}
	bare := k.Args(slices.Clone(prof.Command), attempt())
	if !slices.Equal(bare[:min(len(bare), 2)], prof.Command) {
		t.Fatalf("Args = %q, which does not begin with the profile's command %q", bare, prof.Command)
	}
	full := attempt()
	full.Spec.Model, full.Spec.PermissionMode, full.Spec.SystemPrompt = "model-x", "plan", "be brief"
	full.Spec.Tools, full.Spec.DisallowTools = []string{"Read"}, []string{"Bash"}
	full.Budget = agent.Budget{MaxTurns: 7, MaxCostUSD: 1}
	for _, a := range k.Args(slices.Clone(prof.Command), full) {
		if strings.Contains(a, "PROMPT-TEXT") || strings.Contains(a, "SCRIPT-TEXT") {
			t.Errorf("Args carries the prompt: %q", a)
		}
	}
	if k.BoundsTurns() && !slices.Contains(k.Args(nil, full), "7") {
		t.Errorf("the kind bounds its turns, but Args does not pass MaxTurns 7: %q", k.Args(nil, full))
	}
	ss := k.Sessions()
	if ss == nil {
		if agent.CanResume(prof) || agent.NewSession(prof) != "" || agent.CanContinue(prof, "s-1") {
			t.Error("a kind without sessions resumes or names one")
		}
		return
	}
	if !agent.CanResume(prof) || agent.CanContinue(prof, "--flag") || agent.CanContinue(prof, "../x") {
		t.Error("CanResume false, or CanContinue takes a session that is a flag or a path")
	}
	if id := ss.NewID(); id != "" {
		if id == ss.NewID() || !agent.CanContinue(prof, id) {
			t.Errorf("NewID %q repeats, or is not a session CanContinue takes", id)
		}
		a := attempt()
		a.Session = id
		if got := k.Args(nil, a); !slices.Contains(got, id) {
			t.Errorf("a new session %q is not on the command line %q", id, got)
		}
	}
	a := attempt()
	a.Resume, a.Session = "old-session", "new-session"
	if got := k.Args(nil, a); !slices.Contains(got, "old-session") || slices.Contains(got, "new-session") {
		t.Errorf("resuming old-session: command line %q", got)
	}
	if ss.Kept(attempt(), "no-such-session") {
		t.Error("a session nobody kept is Kept")
	}
}

// checkFormats: each format reads its sample into the report, the session
// and, for a stream, the turns; and survives junk.
func checkFormats(t *testing.T, k agent.Kind, s Sample) {
	for _, f := range k.Formats() {
		out, ok := s.Outputs[f.Name]
		if !ok {
			t.Errorf("format %q has no sample", f.Name)
			continue
		}
		var res agent.Result
		if f.Line != nil {
			if !agent.IsStream(f.Name) {
				t.Errorf("format %q has Line but is no stream", f.Name)
			}
			var st agent.Stream
			for _, l := range strings.Split(out, "\n") {
				f.Line([]byte(l), &st)
			}
			if st.Turns == 0 {
				t.Errorf("format %q: the sample's turns were not counted", f.Name)
			}
			res = agent.StreamResult(&st, 0)
		} else {
			res = agent.ParseResult(f.Name, []byte(out), 0)
		}
		if !res.Success || res.Summary != s.Summary || res.SessionID != s.Session {
			t.Errorf("format %q reads its sample as success %v, summary %q, session %q; want true, %q, %q", f.Name, res.Success, res.Summary, res.SessionID, s.Summary, s.Session)
		}
		var st agent.Stream
		for _, l := range junk {
			if f.Line != nil {
				f.Line([]byte(l), &st)
			} else if r := agent.ParseResult(f.Name, []byte(l), 1); r.Success || r.SessionID != "" {
				t.Errorf("format %q reads %q as %+v", f.Name, l, r)
			}
		}
		if st.SessionID != "" || st.Final != nil && !st.Final.IsError {
			t.Errorf("format %q takes a session or an end from junk: %+v", f.Name, st)
		}
	}
}

// checkLimit: the kind recognises its agent's usage limit, and not a
// plain failure.
func checkLimit(t *testing.T, k agent.Kind, s Sample) {
	now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	if lim := k.Limit(nil, []string{"working\n" + s.Limit}, now); lim == nil {
		t.Errorf("Limit does not recognise %q", s.Limit)
	}
	if lim := k.Limit(nil, []string{"error: file not found\nexit status 1"}, now); lim != nil {
		t.Errorf("Limit takes a plain failure for a usage limit: %+v", lim)
	}
}
