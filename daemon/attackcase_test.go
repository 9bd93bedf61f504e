package daemon_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/taskd/taskd/daemon/worktree"
)

// attacksDir is the attack corpus (its README describes the format).
const attacksDir = "../testdata/attacks"

// An attackCase is one file of the attack corpus: what it sets up, before
// the daemon starts and after, and what must be seen.
type attackCase struct {
	name   string
	about  string     // its first comment line
	before []attackOp // set up before the daemon starts
	after  []attackOp // done once it serves
	expect []attackOp // what must be seen
	config string     // the daemon's configuration file, if any
	cli    bool       // agents get a real taskd on their PATH
	root   bool       // needs root (it chowns)
	cgroup bool       // needs cgroups the daemon may make
	umask  int        // -1: unchanged
}

// An attackOp is one line: a verb and its arguments, the last of which
// is the rest of the line.
type attackOp struct {
	verb string
	args []string
}

// nargs is how many arguments each verb takes, the last being the rest of
// the line (so it may hold spaces).
var nargs = map[string]int{
	"list": 1, "file": 2, "repo": 1, "link": 2, "hardlink": 2, "move": 2, "mkdir": 1, "chown": 1, "chmod": 2,
	"fifo": 1, "socket": 1,
	"umask": 1, "config": 1, "cli": 0, "then": 0, "cgroup": 0,
	// expectations
	"rejected": 2, "misnamed": 3, "refused": 2, "failed": 2, "state": 2, "output": 2,
	"log": 1, "start-fails": 1, "config-fails": 1, "absent": 1, "unchanged": 1, "mode": 2, "event": 3,
	"held": 2, "submit-fails": 2, "doctor": 1, "smaller": 2, "dead": 1,
}

// waits are the expectations that wait for the daemon to have done
// something; every case has one, so that what it must not do is checked
// after the daemon had the chance.
var waits = map[string]bool{"rejected": true, "misnamed": true, "refused": true, "failed": true, "state": true,
	"output": true, "log": true, "start-fails": true, "config-fails": true, "event": true, "held": true, "dead": true}

// parseAttack reads one case. Arguments are words, or Go-quoted strings
// for names with spaces or odd characters.
func parseAttack(path string) (attackCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return attackCase{}, err
	}
	c := attackCase{name: strings.TrimSuffix(filepath.Base(path), ".attack"), umask: -1}
	after, waited := false, false
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if about, ok := strings.CutPrefix(line, "#"); ok {
			if c.about == "" {
				c.about = strings.TrimSpace(about)
			}
			continue
		}
		op, err := parseOp(line)
		if err != nil {
			return c, fmt.Errorf("%s:%d: %v", path, n+1, err)
		}
		switch op.verb {
		case "then":
			after = true
		case "cli":
			c.cli = true
		case "cgroup":
			c.cgroup = true
		case "config":
			c.config = op.args[0]
		case "umask":
			m, err := strconv.ParseInt(op.args[0], 8, 32)
			if err != nil {
				return c, fmt.Errorf("%s:%d: umask %q", path, n+1, op.args[0])
			}
			c.umask = int(m)
		case "expect":
			return c, fmt.Errorf("%s:%d: bare expect", path, n+1)
		default:
			if op.verb == "chown" {
				c.root = true
			}
			if strings.HasPrefix(line, "expect ") {
				c.expect = append(c.expect, op)
				waited = waited || waits[op.verb]
			} else if after {
				c.after = append(c.after, op)
			} else {
				c.before = append(c.before, op)
			}
		}
	}
	if c.about == "" || !waited {
		return c, fmt.Errorf("%s: a case needs a description and an expectation that waits (%v)", path, verbsOf(waits))
	}
	return c, nil
}

// parseOp splits "[expect] VERB ARG… REST".
func parseOp(line string) (attackOp, error) {
	line = strings.TrimPrefix(line, "expect ")
	verb, rest, _ := strings.Cut(line, " ")
	n, ok := nargs[verb]
	if !ok {
		return attackOp{}, fmt.Errorf("unknown verb %q", verb)
	}
	op := attackOp{verb: verb}
	for i := 0; i < n; i++ {
		rest = strings.TrimLeft(rest, " ")
		if i == n-1 && !strings.HasPrefix(rest, `"`) {
			op.args = append(op.args, rest)
			break
		}
		var word string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return op, fmt.Errorf("bad quoted argument in %q", rest)
			}
			word, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			word, rest, _ = strings.Cut(rest, " ")
		}
		op.args = append(op.args, word)
	}
	if len(op.args) != n || (n > 0 && op.args[n-1] == "" && verb != "file") {
		return op, fmt.Errorf("%s takes %d arguments", verb, n)
	}
	return op, nil
}

func verbsOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// attackEnv is where a case runs: a base directory holding the root and,
// beside it, the places nothing may touch.
type attackEnv struct {
	base, root string
	state      string            // the daemon's state directory
	vars       map[string]string // $BASE, $ROOT, $OUTSIDE, $HOME, $SANDBOX, $WORKTREES
}

func newAttackEnv(t *testing.T) *attackEnv {
	base := t.TempDir()
	env := &attackEnv{base: base, root: filepath.Join(base, "tasks"), state: filepath.Join(base, "state")}
	env.vars = map[string]string{
		"$BASE": base, "$ROOT": env.root, "$OUTSIDE": filepath.Join(base, "outside"),
		"$HOME": filepath.Join(base, "home", "me"), "$SANDBOX": filepath.Join(base, "sandbox"),
		"$WORKTREES": worktree.Place{State: env.state, Root: env.root}.Dir(),
	}
	files := map[string]string{
		"outside/secret.txt":                    "SECRET-OUTSIDE-7f3a\n",
		"outside/victim":                        "victim: must stay as it is\n",
		"outside/target/keep":                   "keep\n",
		"home/me/.ssh/id_rsa":                   "SECRET-SSH-KEY-9b1c\n",
		"home/me/.aws/credentials":              "SECRET-AWS-2d4e\n",
		"home/me/.netrc":                        "SECRET-NETRC-8c0d\n",
		"home/me/.gnupg/secring.gpg":            "SECRET-GPG-1e2f\n",
		"home/me/.config/gcloud/credentials.db": "SECRET-GCLOUD-3a4b\n",
		"home/me/.claude/.credentials.json":     "SECRET-CLAUDE-5c6d\n",
		"home/me/project/README.md":             "a project file\n",
		"home/other/secret.txt":                 "SECRET-OTHER-HOME-7e8f\n",
		"sandbox/notes.md":                      "notes\n",
	}
	for p, content := range files {
		full := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(env.root, 0o700); err != nil {
		t.Fatal(err)
	}
	return env
}

// expand replaces the placeholders in s.
func (env *attackEnv) expand(s string) string {
	for k, v := range env.vars {
		s = strings.ReplaceAll(s, k, v)
	}
	return s
}

// path is a case's path: relative to the base, or absolute.
func (env *attackEnv) path(p string) string {
	p = env.expand(p)
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(env.base, p)
}

// do performs one setup line.
func (env *attackEnv) do(op attackOp) error {
	a := op.args
	switch op.verb {
	case "list":
		return os.MkdirAll(filepath.Join(env.root, a[0]), 0o700)
	case "file":
		p := env.path(a[0])
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(env.expand(a[1])), 0o600)
	case "repo":
		return gitRepoAt(env.path(a[0]))
	case "link":
		p := env.path(a[0])
		os.MkdirAll(filepath.Dir(p), 0o700)
		return plantLink(env.path(a[1]), p)
	case "hardlink":
		p := env.path(a[0])
		os.MkdirAll(filepath.Dir(p), 0o700)
		return os.Link(env.path(a[1]), p)
	case "move":
		return os.Rename(env.path(a[0]), env.path(a[1]))
	case "mkdir":
		return os.MkdirAll(env.path(a[0]), 0o700)
	case "chown":
		return os.Lchown(env.path(a[0]), 65534, 65534)
	case "fifo":
		p := env.path(a[0])
		os.MkdirAll(filepath.Dir(p), 0o700)
		return syscall.Mkfifo(p, 0o600)
	case "socket":
		p := env.path(a[0])
		os.MkdirAll(filepath.Dir(p), 0o700)
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
		if err != nil {
			return err
		}
		l.SetUnlinkOnClose(false) // the socket file stays, with nobody behind it
		return l.Close()
	case "chmod":
		m, err := strconv.ParseUint(a[1], 8, 32)
		if err != nil {
			return err
		}
		return os.Chmod(env.path(a[0]), os.FileMode(m))
	}
	return fmt.Errorf("%s is not a setup verb", op.verb)
}

// gitRepoAt makes dir (and what it holds) a git repository with one
// commit.
func gitRepoAt(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "--no-verify", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	return nil
}

// treeOf describes every entry under dir, links not followed: type,
// mode, owner, size, contents or target.
func treeOf(dir string) map[string]string {
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			out[p] = "error " + err.Error()
			return nil
		}
		st := fi.Sys().(*syscall.Stat_t)
		d := fmt.Sprintf("%s uid %d size %d", fi.Mode(), st.Uid, fi.Size())
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			to, _ := os.Readlink(p)
			d += " → " + to
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			d += " " + string(data)
		}
		out[p] = d
		return nil
	})
	return out
}

// plantLink puts a symbolic link to target at p, as an attacker racing the
// daemon would: whatever is at p is replaced — a directory the daemon
// made again (its .taskd, say) is moved aside to p.old-N first — and the
// link goes in by a rename, so the path is never missing for long.
func plantLink(target, p string) error {
	tmp := p + ".link"
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	for n := 1; ; n++ {
		err := os.Rename(tmp, p)
		if err == nil {
			return nil
		}
		fi, serr := os.Lstat(p)
		if serr != nil || !fi.IsDir() || n > 100 {
			os.Remove(tmp)
			return err
		}
		if err := os.Rename(p, fmt.Sprintf("%s.old-%d", p, n)); err != nil && !os.IsNotExist(err) {
			os.Remove(tmp)
			return err
		}
	}
}
