package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/worktree"
)

// A Mapping maps a coordinator's directory (From) to where it is on this
// machine (To), as --dir-map FROM=TO says.
type Mapping struct {
	From, To string
}

// ParseMapping parses FROM=TO: two absolute paths.
func ParseMapping(s string) (Mapping, error) {
	from, to, ok := strings.Cut(s, "=")
	if !ok || !filepath.IsAbs(from) || !filepath.IsAbs(to) {
		return Mapping{}, fmt.Errorf("--dir-map %q: want FROM=TO, two absolute paths", s)
	}
	return Mapping{From: filepath.Clean(from), To: filepath.Clean(to)}, nil
}

// mapPath maps path by the mapping with the longest From that is path or
// one of its parents; a path no mapping covers stays as it is.
func mapPath(maps []Mapping, path string) string {
	if path == "" {
		return ""
	}
	best := -1
	for i, m := range maps {
		if (path == m.From || strings.HasPrefix(path, m.From+string(filepath.Separator)) || m.From == "/") &&
			(best < 0 || len(m.From) > len(maps[best].From)) {
			best = i
		}
	}
	if best < 0 {
		return path
	}
	m := maps[best]
	rel, _ := filepath.Rel(m.From, path)
	return filepath.Join(m.To, rel)
}

// workDir returns the directory attempt wk runs in, and what to call when
// it has ended: with a repository (metadata.taskd.repo), a git worktree
// of it at its ref (default: the default branch) made for the attempt
// from a clone the worker keeps; otherwise the coordinator's working
// directory, mapped, which must exist here.
func (w *Worker) workDir(ctx context.Context, wk remote.Work) (string, func(), error) {
	if wk.Repo == "" {
		dir := mapPath(w.cfg.DirMap, wk.Cwd)
		if why := agent.NotADirectory(dir); why != "" {
			via := ""
			if dir != wk.Cwd {
				via = fmt.Sprintf(" (mapped from %q)", wk.Cwd)
			}
			return "", nil, fmt.Errorf("working directory %q%s %s on worker %s; map the coordinator's directories with taskd worker --dir-map FROM=TO, or give the task metadata.taskd.repo to clone", dir, via, why, w.cfg.Name)
		}
		return dir, func() {}, nil
	}
	if !remote.PlainID(wk.ID) || strings.HasPrefix(wk.Repo, "-") || strings.HasPrefix(wk.Ref, "-") {
		return "", nil, fmt.Errorf("metadata.taskd.repo %q or ref %q cannot be cloned", wk.Repo, wk.Ref)
	}
	sum := sha256.Sum256([]byte(wk.Repo))
	cache := filepath.Join(w.cfg.State, "repos", hex.EncodeToString(sum[:8]))
	dir := filepath.Join(w.attemptsDir(), wk.ID, "work")
	w.repoMu.Lock()
	defer w.repoMu.Unlock()
	if _, err := os.Stat(cache); err != nil {
		if err := os.MkdirAll(filepath.Dir(cache), 0o700); err != nil {
			return "", nil, err
		}
		if err := git(ctx, "", "clone", "--quiet", "--mirror", "--", wk.Repo, cache); err != nil {
			return "", nil, fmt.Errorf("clone %s: %w", wk.Repo, err)
		}
	} else if err := git(ctx, cache, "fetch", "--quiet", "--prune", "origin"); err != nil {
		return "", nil, fmt.Errorf("fetch %s: %w", wk.Repo, err)
	}
	ref := wk.Ref
	if ref == "" {
		ref = "HEAD"
	}
	if err := git(ctx, cache, "worktree", "add", "--quiet", "--detach", dir, ref); err != nil {
		return "", nil, fmt.Errorf("check out %s of %s: %w", ref, wk.Repo, err)
	}
	release := func() {
		w.repoMu.Lock()
		defer w.repoMu.Unlock()
		if err := git(context.Background(), cache, "worktree", "remove", "--force", dir); err != nil {
			w.log.Warn("remove a worktree", "path", dir, "err", err)
		}
	}
	return dir, release, nil
}

// git runs a git command of the worker's, in dir: the one place the
// worker starts git. It goes through worktree.Git (the allow-listed
// environment, no hooks, no fsmonitor, no ext:: transport), with what a
// fetch needs besides: the SSH agent and the proxies.
func git(ctx context.Context, dir string, args ...string) error {
	_, err := worktree.Git(ctx, worktree.Call{Dir: dir, Args: args, Pass: fetchEnv})
	return err
}

// fetchEnv are the variables a clone or a fetch may need from the
// worker's environment, besides the allow-list: the SSH agent, the SSH
// command, and proxies.
var fetchEnv = []string{"SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy"}

// ParseProfiles parses --profiles: names separated by commas.
func ParseProfiles(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
