package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
)

// optionParser writes an executable that reads its arguments as codex's
// (clap) and opencode's (yargs) parsers do: an argument that starts with
// "-" before a "--" is an option, and one it does not know fails the run
// with status 2, as clap's "unexpected argument" does; after "--" every
// argument is the prompt. It records the prompt in the file prompt and
// prints the lines of done.
func optionParser(t *testing.T, name, known, prompt string, done []string) string {
	t.Helper()
	var out strings.Builder
	for _, l := range done {
		out.WriteString("printf '%s\\n' '" + strings.ReplaceAll(l, "'", `'\''`) + "'\n")
	}
	script := `#!/bin/sh
shift # the subcommand: exec, run
rest=0
while [ $# -gt 0 ]; do
	if [ $rest = 0 ]; then
		case "$1" in
		--) rest=1; shift; continue ;;
		` + known + `) shift; continue ;;
		--model|--format) shift 2; continue ;;
		-*) echo "error: unexpected argument '$1' found" >&2; exit 2 ;;
		esac
	fi
	printf '%s' "$1" > '` + prompt + `'
	shift
done
` + out.String()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAgentArgs_PromptIsNeverAnOption: a prompt that begins with "-" (a
// Markdown list, or "--dangerously-bypass-approvals-and-sandbox") reaches
// codex and opencode, which take it as an argument, as their prompt and
// never as one of their options: the command line ends its options with
// "--" before it.
func TestAgentArgs_PromptIsNeverAnOption(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	codexPrompt, opencodePrompt := filepath.Join(dir, "codex-prompt"), filepath.Join(dir, "opencode-prompt")
	codex := optionParser(t, "codex", "--json", codexPrompt, []string{
		`{"type":"thread.started","thread_id":"thread-1"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"{\"success\": true, \"summary\": \"done\"}"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}`,
	})
	opencode := optionParser(t, "opencode", "--json", opencodePrompt, []string{
		`{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}`,
		`{"type":"text","sessionID":"ses_1","part":{"type":"text","text":"{\"success\": true, \"summary\": \"done\"}"}}`,
		`{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","cost":0.001,"tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":0,"write":0}}}}`,
	})
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{
			"codex":    {Command: []string{codex, "exec", "--json"}, Prompt: "arg", Output: "codex-json"},
			"opencode": {Command: []string{opencode, "run", "--format", "json"}, Prompt: "arg", Output: "opencode-json"},
		}
	})
	n := 0
	for _, c := range []struct{ agent, file string }{{"codex", codexPrompt}, {"opencode", opencodePrompt}} {
		for _, prompt := range []string{
			"- fix the login redirect\n- add a test for it",
			"--dangerously-bypass-approvals-and-sandbox",
			"--model=other/model write the notes",
		} {
			n++
			id := string(rune('0' + n))
			t.Run(c.agent+"/"+id, func(t *testing.T) {
				h.drop("l", id, execTask(c.agent, prompt, "taskd.agent", `"`+c.agent+`"`, "taskd.cwd", `"`+dir+`"`, "taskd.model", `"m"`))
				tf := h.waitEnded("l", id, time.Minute)
				if got := task.Of(tf); got != task.Succeeded {
					t.Fatalf("the task is %s, want succeeded; the agent's stderr: %s", got, h.runFile("l", id, 1, "stderr.log"))
				}
				got, err := os.ReadFile(c.file)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != prompt {
					t.Errorf("the agent's prompt is %q, want %q", got, prompt)
				}
			})
		}
	}
}
