package agent

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
)

// How many tools an attempt's agent invoked (the subagent commands'
// tool_invocation_count). A claude agent's own session transcript says:
// Claude Code keeps it as $CLAUDE_CONFIG_DIR/projects/<project>/<session>.jsonl
// (default ~/.claude), one JSON line per message, and every tool the model
// called is a tool_use block of an assistant line. Any other agent may
// report the count itself in its result object ("tool_invocation_count").
// A count that cannot be established is left out, never guessed.

// sessionIDPattern is what a session id must look like before it is used
// in a path: Claude Code's are UUIDs.
var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// claudeConfigDir returns the configuration directory of a claude agent
// started with env: $CLAUDE_CONFIG_DIR, else $HOME/.claude.
func claudeConfigDir(env []string) string {
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CLAUDE_CONFIG_DIR="); ok && v != "" {
			return v
		}
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".claude")
}

// countToolUses counts the tool_use blocks of the assistant messages in
// session's transcript under configDir that were written at or after
// since (a resumed session's file also holds the earlier attempts). The
// second result is false when there is no transcript to count from.
// Tool-use ids are counted once each: Claude Code may write one message
// across several lines.
func countToolUses(configDir, session string, since time.Time) (int, bool) {
	if configDir == "" || !sessionIDPattern.MatchString(session) {
		return 0, false
	}
	paths, _ := filepath.Glob(filepath.Join(configDir, "projects", "*", session+".jsonl"))
	if len(paths) == 0 {
		return 0, false
	}
	seen := map[string]bool{}
	n := 0
	for _, p := range paths {
		f, err := fsroot.OpenRegular(p, os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			for _, id := range toolUseIDs(sc.Bytes(), since) {
				if id == "" || !seen[id] {
					seen[id] = true
					n++
				}
			}
		}
		f.Close()
	}
	return n, true
}

// toolUseIDs returns the ids of the tool_use blocks of one transcript line
// when it is an assistant message written at or after since.
func toolUseIDs(line []byte, since time.Time) []string {
	var m struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
		Message   struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &m) != nil || m.Type != "assistant" {
		return nil
	}
	if !m.Timestamp.IsZero() && m.Timestamp.Before(since) {
		return nil
	}
	var blocks []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if json.Unmarshal(m.Message.Content, &blocks) != nil {
		return nil
	}
	var ids []string
	for _, b := range blocks {
		if b.Type == "tool_use" {
			ids = append(ids, b.ID)
		}
	}
	return ids
}
