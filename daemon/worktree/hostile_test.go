package worktree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostileRepo makes a repository whose own configuration and hooks would
// run commands on everything git does in it, each recording its
// environment in a file of log named after it: every hook, core.fsmonitor,
// a filter driver (clean, smudge, process) and a diff driver (textconv,
// external diff) for every file.
func hostileRepo(t *testing.T, log string) string {
	t.Helper()
	r := newRepo(t)
	write(t, filepath.Join(r, ".gitattributes"), "* filter=rec diff=rec\n")
	run(t, r, "add", ".gitattributes")
	run(t, r, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--no-verify", "-m", "attributes")
	record := func(name string) string { return "env > " + filepath.Join(log, name) }
	for _, hook := range []string{"post-checkout", "pre-commit", "prepare-commit-msg", "commit-msg", "post-commit",
		"post-index-change", "reference-transaction", "post-rewrite", "pre-auto-gc"} {
		write(t, filepath.Join(r, ".git", "hooks", hook), "#!/bin/sh\ncat >/dev/null 2>&1 &\n"+record(hook)+"\n")
		os.Chmod(filepath.Join(r, ".git", "hooks", hook), 0o755)
	}
	for _, kv := range [][2]string{
		{"core.fsmonitor", record("fsmonitor")},
		{"filter.rec.clean", "sh -c '" + record("clean") + "; cat'"},
		{"filter.rec.smudge", "sh -c '" + record("smudge") + "; cat'"},
		{"filter.rec.required", "true"},
		{"diff.rec.textconv", "sh -c '" + record("textconv") + "; cat \"$1\"' -"},
		{"diff.external", filepath.Join(r, ".git", "hooks", "post-commit")},
	} {
		run(t, r, "config", kv[0], kv[1])
	}
	return r
}

// TestHostileRepository: in a repository whose hooks, fsmonitor, filter
// and diff drivers would each record their environment, taskd's own git
// commands (making a worktree, committing a task's work, showing it,
// removing the worktree) run none of them. The control: the same
// repository used as a person uses git runs them, with the secret of the
// environment. A command git itself runs gets the allow-listed
// environment only: HOME, not the secret.
func TestHostileRepository(t *testing.T) {
	t.Setenv("TASKD_TEST_SECRET", "SECRET-GIT-ENV-1")
	log := t.TempDir()
	r := hostileRepo(t, log)
	state := t.TempDir()
	w, err := Create(t.Context(), state, Spec{Dir: r, Path: filepath.Join(state, "worktrees", "k", "l", "1"), Branch: Branch("l", "1")})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "file.txt"), "changed\n")
	write(t, filepath.Join(w.Path, "new.txt"), "new\n")
	if w, err = Commit(t.Context(), state, w, "the work"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "wip.txt"), "wip\n")
	if _, err := Diff(t.Context(), state, w, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(t.Context(), state, w, "left"); err != nil {
		t.Fatal(err)
	}
	if got := run(t, r, "show", "taskd/l/1:wip.txt"); got != "wip" {
		t.Errorf("the branch's work: wip.txt %q", got)
	}
	if ran, _ := os.ReadDir(log); len(ran) > 0 {
		for _, e := range ran {
			t.Errorf("taskd's git ran the repository's %s", e.Name())
		}
	}

	// The control: git as a person runs it has all of it run, with the
	// secret.
	write(t, filepath.Join(r, "file.txt"), "by a person\n")
	cmd := exec.Command("git", "-C", r, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-a", "-m", "by hand")
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit as a person: %v\n%s", err, out)
	}
	for _, name := range []string{"pre-commit", "post-commit", "clean"} {
		if env := read(t, filepath.Join(log, name)); !strings.Contains(env, "SECRET-GIT-ENV-1") {
			t.Errorf("the control: a person's git did not run %s with the secret (%q)", name, env)
		}
	}

	out := filepath.Join(t.TempDir(), "env")
	if _, err := Git(t.Context(), Call{Dir: r, Args: []string{"-c", "alias.envdump=!env > " + out, "envdump"}}); err != nil {
		t.Fatal(err)
	}
	env := read(t, out)
	if strings.Contains(env, "SECRET-GIT-ENV-1") || !strings.Contains(env, "HOME="+os.Getenv("HOME")) || !strings.Contains(env, "PATH=") {
		t.Errorf("what git runs for taskd sees:\n%s\nwant HOME and PATH and no secret", env)
	}
}
