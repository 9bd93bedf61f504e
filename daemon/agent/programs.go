package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// programCache remembers for a second where lookPath found a program on a
// PATH: with a PATH of a dozen directories, finding `sh` costs a dozen
// stats, for every agent. A remembered path is checked with one stat
// before it is used; a program installed earlier on the PATH is found
// within the second. Safe for concurrent use.
type programCache struct {
	mu sync.Mutex
	m  map[[2]string]foundProgram // by program and PATH
}

type foundProgram struct {
	path string
	at   time.Time
}

// programTTL is how long programCache trusts a lookup.
const programTTL = time.Second

// lookPath is lookPath, remembered.
func (c *programCache) lookPath(prog string, env []string) (string, error) {
	if strings.Contains(prog, "/") {
		return lookPath(prog, env)
	}
	key := [2]string{prog, envValue(env, "PATH")}
	now := time.Now()
	c.mu.Lock()
	f, ok := c.m[key]
	c.mu.Unlock()
	if ok && now.Sub(f.at) < programTTL && isProgram(f.path) {
		return f.path, nil
	}
	p, err := lookPath(prog, env)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) > 64 { // a handful of profiles and PATHs; past that, start over
		c.m = map[[2]string]foundProgram{}
	}
	c.m[key] = foundProgram{path: p, at: now}
	c.mu.Unlock()
	return p, nil
}

// envValue returns the value of variable name in env (the last one wins).
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, name+"="); ok {
			v = rest
		}
	}
	return v
}

// isProgram reports whether path is a file someone may execute.
func isProgram(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// lookPath finds prog on the agent's PATH (not the daemon's).
func lookPath(prog string, env []string) (string, error) {
	if strings.Contains(prog, "/") {
		if _, err := os.Stat(prog); err != nil {
			return "", fmt.Errorf("program %q not found", prog)
		}
		return prog, nil
	}
	for _, dir := range filepath.SplitList(envValue(env, "PATH")) {
		if dir == "" {
			dir = "."
		}
		if p := filepath.Join(dir, prog); isProgram(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("program %q not found on PATH", prog)
}
