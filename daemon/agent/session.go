package agent

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Resume, don't restart. An attempt interrupted while its agent ran (the
// daemon stopped or died) runs again as a new attempt. When the agent
// keeps its conversation as a session that can be continued and the
// session of the interrupted attempt is known, the new attempt continues
// that session instead of starting over, told that it was interrupted. The
// claude profile can: each new claude session is given its id up front
// (--session-id), which cmd.json records, so it is known even when the
// agent is killed before it prints anything; the next attempt runs claude
// --resume <id> once its transcript is found. Every other profile (exec,
// opencode, codex) starts over from its prompt: a shell script cannot be
// continued, and taskd does not yet pass sessions to the others.

// NewSessionID returns a new session id (a random UUID, version 4).
func NewSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Session returns the agent session of the attempt whose run folder is
// runDir, where one is known: the one cmd.json records (given to the agent
// when it started, or learnt from its output), else result.json's; "" if
// neither says.
func Session(runDir string) string {
	var info struct {
		SessionID string `json:"sessionId"`
	}
	if data, err := readRunFile(runDir, "cmd.json", 1<<20); err == nil && json.Unmarshal(data, &info) == nil && info.SessionID != "" {
		return info.SessionID
	}
	if r, ok := ReadResult(runDir); ok {
		return r.SessionID
	}
	return ""
}

// interruptedPrompt is what a resumed session is told.
const interruptedPrompt = `Your previous run of this task was interrupted before it finished: the process running you was stopped. The conversation so far is above. Continue the task from where you left off. Check the state of what you were changing before you change it again, do not redo work that is already done, and end as the task asks.`

// ResumeInterrupted makes attempt a continue session, that of an attempt
// of its task that was interrupted, when a's profile can (claude) and the
// session's transcript is kept where its agent will look: a.Resume is set
// and the prompt says it was interrupted. It reports whether it did; if
// not, the attempt starts over with its own prompt.
func (a *Attempt) ResumeInterrupted(session string) bool {
	if a.Resume != "" {
		return false
	}
	return a.Continue(session, interruptedPrompt)
}

// Continue makes attempt a continue session, an earlier attempt's of its
// task, with prompt, when a's profile can (claude) and the session's
// transcript is kept where its agent will look. It reports whether it
// did; if not, the attempt starts over with its own prompt.
func (a *Attempt) Continue(session, prompt string) bool {
	if !CanContinue(a.Profile, session) {
		return false
	}
	dir := claudeConfigDir(a.profileEnv("HOME", "CLAUDE_CONFIG_DIR"))
	if dir == "" {
		return false
	}
	if found, _ := filepath.Glob(filepath.Join(dir, "projects", "*", session+".jsonl")); len(found) == 0 {
		return false
	}
	a.Resume, a.Session, a.Fork = session, "", false
	a.Prompt, a.Script = prompt, ""
	return true
}

// profileEnv returns the variables names as the attempt's agent gets them
// (agentEnv): set by its profile (NAME=value), else passed from the
// daemon's environment if the base list or the profile allows them.
func (a *Attempt) profileEnv(names ...string) []string {
	var env []string
	for _, name := range names {
		v, set := "", false
		allow := slices.Contains(baseEnv, name)
		for _, e := range a.Profile.Env {
			if n, val, ok := strings.Cut(e, "="); ok && n == name {
				v, set = val, true
			} else if !ok && (e == name || strings.HasSuffix(e, "*") && strings.HasPrefix(name, e[:len(e)-1])) {
				allow = true
			}
		}
		if !set && allow {
			v, set = os.LookupEnv(name)
		}
		if set {
			env = append(env, name+"="+v)
		}
	}
	return env
}
