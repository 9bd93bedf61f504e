package handoff_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/handoff"
	"github.com/taskd/taskd/internal/claudestub"
)

const session = "0df8413f-f2c4-4bbb-8f31-6c13e4c6364e"

// runClaude runs the real Claude Code CLI once in dir, with home as its
// HOME, against a stub that answers "ok", and returns its session id.
func runClaude(t *testing.T, home, dir string) string {
	t.Helper()
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, func(int, string) claudestub.Turn { return claudestub.Turn{Text: "ok"} })
	cmd := exec.Command(bin, "-p", "hello", "--output-format", "json")
	cmd.Dir = dir
	cmd.Env = append(withHome(stub.Env(t), home), "PATH="+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	var res struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.SessionID == "" {
		t.Fatalf("claude printed no session id: %v\n%s", err, out)
	}
	return res.SessionID
}

// withHome is env with HOME set to home.
func withHome(env []string, home string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+home)
}

// TestRealTranscript runs the real CLI in project directories whose
// names hold characters Claude Code encodes, and finds each session's
// directory from its transcript; the directory the CLI made for it is
// named as the package comment says.
func TestRealTranscript(t *testing.T) {
	home := t.TempDir()
	for _, name := range []string{"app", "my.app_x y", "ünï-cödé"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(home, "src", name, "sub")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			id := runClaude(t, home, dir)
			if !handoff.IsSession(id) {
				t.Fatalf("session id %q is not a session id to IsSession", id)
			}
			projects := filepath.Join(home, ".claude", "projects")
			got, err := handoff.ProjectDir(projects, id)
			if err != nil {
				t.Fatal(err)
			}
			if got != dir {
				t.Errorf("ProjectDir = %q, want %q", got, dir)
			}
			want := encode(dir)
			if _, err := os.Stat(filepath.Join(projects, want, id+".jsonl")); err != nil {
				entries, _ := os.ReadDir(projects)
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("the transcript is not in %s: %v (the projects directory has %q)", want, err, names)
			}
		})
	}
}

// encode is Claude Code's name for a project directory of up to 200
// characters: every UTF-16 unit but A-Z a-z 0-9 becomes "-".
func encode(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// transcript writes lines as session's transcript in the project
// directory named name under projects, and returns its path.
func transcript(t *testing.T, projects, name string, lines ...string) string {
	t.Helper()
	dir := filepath.Join(projects, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, session+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func cwdLine(dir string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]string{"role": "user", "content": "hi"}, "cwd": dir, "sessionId": session})
	return string(b)
}

const queueLine = `{"type":"queue-operation","operation":"enqueue","sessionId":"` + session + `","content":"hi"}`

// projectDir calls ProjectDir with a deadline: a read that blocks fails
// the test instead of hanging it.
func projectDir(t *testing.T, projects, id string) (string, error) {
	t.Helper()
	type res struct {
		dir string
		err error
	}
	done := make(chan res, 1)
	go func() {
		dir, err := handoff.ProjectDir(projects, id)
		done <- res{dir, err}
	}()
	select {
	case r := <-done:
		return r.dir, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("ProjectDir blocked for 10s")
		return "", nil
	}
}

func TestProjectDir(t *testing.T) {
	project := t.TempDir()
	other := t.TempDir()
	cases := []struct {
		name    string
		setup   func(t *testing.T, projects string)
		want    string // the directory, or "" for an error
		problem string // in the error
	}{
		{"found after lines without cwd", func(t *testing.T, p string) {
			transcript(t, p, "-x", queueLine, queueLine, cwdLine(project), cwdLine(other))
		}, project, ""},
		{"no projects directory", func(t *testing.T, p string) { os.Remove(p) }, "", "does not exist"},
		{"no transcript", func(t *testing.T, p string) {
			transcript(t, p, "-x", cwdLine(project))
			os.Rename(filepath.Join(p, "-x", session+".jsonl"), filepath.Join(p, "-x", "other.jsonl"))
		}, "", "no transcript"},
		{"symbolic link", func(t *testing.T, p string) {
			real := transcript(t, t.TempDir(), "-y", cwdLine(project))
			os.MkdirAll(filepath.Join(p, "-x"), 0o700)
			if err := os.Symlink(real, filepath.Join(p, "-x", session+".jsonl")); err != nil {
				t.Fatal(err)
			}
		}, "", "symbolic link"},
		{"project directory is a link", func(t *testing.T, p string) {
			elsewhere := t.TempDir()
			transcript(t, elsewhere, "-y", cwdLine(project))
			if err := os.Symlink(filepath.Join(elsewhere, "-y"), filepath.Join(p, "-x")); err != nil {
				t.Fatal(err)
			}
		}, "", "no transcript"},
		{"FIFO", func(t *testing.T, p string) {
			os.MkdirAll(filepath.Join(p, "-x"), 0o700)
			if err := syscall.Mkfifo(filepath.Join(p, "-x", session+".jsonl"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "", "FIFO"},
		{"directory", func(t *testing.T, p string) {
			os.MkdirAll(filepath.Join(p, "-x", session+".jsonl"), 0o700)
		}, "", "not a regular file"},
		{"huge first line", func(t *testing.T, p string) {
			big := `{"type":"user","message":"` + strings.Repeat("a", handoff.MaxScan) + `","cwd":"` + project + `"}`
			transcript(t, p, "-x", big)
		}, "", "first 4 MiB"},
		{"long line within the bound", func(t *testing.T, p string) {
			big := `{"type":"user","message":"` + strings.Repeat("a", 300<<10) + `","cwd":"` + project + `"}`
			transcript(t, p, "-x", queueLine, big)
		}, project, ""},
		{"no cwd", func(t *testing.T, p string) { transcript(t, p, "-x", queueLine, "not json", `{"cwd": 3}`) }, "", "names no directory"},
		{"relative cwd", func(t *testing.T, p string) { transcript(t, p, "-x", `{"cwd":"src/app"}`) }, "", "names no directory"},
		{"cwd gone", func(t *testing.T, p string) { transcript(t, p, "-x", cwdLine(filepath.Join(project, "gone"))) }, "", "does not exist"},
		{"cwd a file", func(t *testing.T, p string) {
			f := filepath.Join(project, "file")
			os.WriteFile(f, nil, 0o600)
			transcript(t, p, "-x", cwdLine(f))
		}, "", "not a directory"},
		{"the latest transcript decides", func(t *testing.T, p string) {
			old := transcript(t, p, "-a", cwdLine(other))
			transcript(t, p, "-b", cwdLine(project))
			past := time.Now().Add(-time.Hour)
			os.Chtimes(old, past, past)
		}, project, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			projects := filepath.Join(t.TempDir(), "projects")
			if err := os.Mkdir(projects, 0o700); err != nil {
				t.Fatal(err)
			}
			c.setup(t, projects)
			got, err := projectDir(t, projects, session)
			if c.want != "" {
				if err != nil || got != c.want {
					t.Fatalf("ProjectDir = %q, %v; want %q", got, err, c.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.problem) {
				t.Fatalf("ProjectDir = %q, %v; want an error saying %q", got, err, c.problem)
			}
		})
	}
}

// TestHostileSessionIDs: only a UUID is looked up; nothing else a list
// may be called becomes part of a path.
func TestHostileSessionIDs(t *testing.T) {
	projects := filepath.Join(t.TempDir(), "projects")
	// A transcript every hostile name below would reach if it were used
	// as a path.
	transcript(t, projects, "..", cwdLine(t.TempDir()))
	for _, id := range []string{"", "..", "../" + session, session + "/..", "a/b", "*", session[:35] + "/", session + "x",
		"0df8413f-f2c4-4bbb-8f31-6c13e4c6364g", "0df8413f_f2c4-4bbb-8f31-6c13e4c6364e", "..........................................."} {
		if handoff.IsSession(id) {
			t.Errorf("IsSession(%q) = true", id)
		}
		if _, err := handoff.ProjectDir(projects, id); err != handoff.ErrNotSession {
			t.Errorf("ProjectDir(%q) = %v, want ErrNotSession", id, err)
		}
	}
	for _, id := range []string{session, strings.ToUpper(session)} {
		if !handoff.IsSession(id) {
			t.Errorf("IsSession(%q) = false", id)
		}
	}
}
