// Package readable is the rule for the files a task's /read may load into
// its prompt: project files, never secrets.
//
// A path may be read when, with every symbolic link resolved, it lies
// inside one of the task's roots (its working directory, its list
// directory) or the configured allowedRoots, and is not denied. A root
// that is "/" or an ancestor of the user's home (such as /home) is no root
// at all: a working directory of "/" does not make everything readable.
// The home itself can be a root (it is the default working directory), but
// what is denied stays denied inside it.
//
// Denied, whatever the roots: /proc, /sys and /dev (the daemon's own
// environment and devices), the credential stores (Credentials) in the
// user's home and in every other user's, and other users' homes. Other
// users are known from the user database (OtherHomes), never guessed from
// the directories beside the home: a home directly under /tmp leaves the
// rest of /tmp to the rule of roots. A directory the configuration's
// allowedRoots names inside another user's home (one shared with you)
// opens that directory, and only it. The path is checked both as written
// and as resolved, so a link cannot lead into a denied place, nor out of
// one under another name.
package readable

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Errors of the rule; the messages name the path and say why.
var (
	// ErrOutside is wrapped when a path is inside no root.
	ErrOutside = errors.New("outside the directories /read may load from")
	// ErrDenied is wrapped when a path is in a place /read never loads from.
	ErrDenied = errors.New("not allowed: /read never loads from it")
)

// System directories /read never loads from.
var System = []string{"/proc", "/sys", "/dev"}

// Credentials are the places in the home where programs keep secrets,
// relative to the home: /read never loads from them.
var Credentials = []string{
	".ssh", ".aws", ".gnupg", ".netrc", ".config/gcloud", ".claude/.credentials.json",
	".azure", ".kube", ".docker/config.json", ".git-credentials", ".config/gh",
	".password-store", ".pgpass", ".npmrc", ".pypirc",
}

// Rule is the rule for one task.
type Rule struct {
	Home    string   // the user's home
	Roots   []string // the task's: its working directory, its list directory
	Allowed []string // the configuration's allowedRoots
	Others  []string // the other users' homes (OtherHomes)
}

// Check returns nil when the absolute, cleaned path p, whose links resolve
// to real, may be read; otherwise an error wrapping ErrDenied or
// ErrOutside that says why.
func (r Rule) Check(p, real string) error {
	for _, q := range []string{p, real} {
		if why := r.denied(q); why != "" {
			return fmt.Errorf("%s is %w (%s)", p, ErrDenied, why)
		}
	}
	var skipped []string
	for _, root := range append(slices.Clip(r.Roots), r.Allowed...) {
		if !r.IsRoot(root) {
			skipped = append(skipped, root)
			continue
		}
		if within(real, root) || within(real, resolve(root)) {
			return nil
		}
	}
	extra := ""
	if len(skipped) > 0 {
		extra = fmt.Sprintf(" (%s cannot be one: / and the ancestors of your home are not roots)", strings.Join(skipped, ", "))
	}
	return fmt.Errorf("%s is %w%s", p, ErrOutside, extra)
}

// RootOf returns the root of r that holds real, a path Check allowed with
// its links resolved: the root with its own links resolved when it holds
// real so, else as written. A file is then opened from it following no
// link (package fsroot), so that a directory swapped for a link after
// Check cannot lead the read out.
func (r Rule) RootOf(real string) (string, bool) {
	for _, root := range append(slices.Clip(r.Roots), r.Allowed...) {
		if !r.IsRoot(root) {
			continue
		}
		for _, b := range []string{resolve(root), filepath.Clean(root)} {
			if within(real, b) {
				return b, true
			}
		}
	}
	return "", false
}

// IsRoot reports whether dir may be a root: not "/" and not an ancestor
// of the home (it may be the home itself).
func (r Rule) IsRoot(dir string) bool {
	dir = filepath.Clean(dir)
	if dir == "/" || dir == "." || dir == "" {
		return false
	}
	home := filepath.Clean(r.Home)
	return !(r.Home != "" && dir != home && within(home, dir)) &&
		!(r.Home != "" && resolve(dir) != resolve(home) && within(resolve(home), resolve(dir)))
}

// denied says why p may never be read, or "".
func (r Rule) denied(p string) string {
	for _, s := range System {
		if within(p, s) {
			return s + " holds the system's and the daemon's own state"
		}
	}
	for i, home := range append([]string{r.Home}, r.Others...) {
		if home == "" {
			continue
		}
		for _, h := range []string{filepath.Clean(home), resolve(home)} {
			for _, c := range Credentials {
				if within(p, filepath.Join(h, c)) && i == 0 {
					return "~/" + c + " holds credentials"
				} else if within(p, filepath.Join(h, c)) {
					return filepath.Join(h, c) + " holds another user's credentials"
				}
			}
			if i > 0 && within(p, h) && !r.shared(p, h) {
				return h + " is another user's home"
			}
		}
	}
	return ""
}

// shared reports whether p lies in a directory of allowedRoots inside
// other, another user's home: one that user shares, named on purpose.
func (r Rule) shared(p, other string) bool {
	for _, a := range r.Allowed {
		for _, root := range []string{filepath.Clean(a), resolve(a)} {
			if within(root, other) && within(p, root) {
				return true
			}
		}
	}
	return false
}

// within reports whether p is dir or inside it (both absolute and clean).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// resolve is p with its links resolved, or p when that fails.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
