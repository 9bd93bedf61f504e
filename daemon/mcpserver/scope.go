package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/readable"
)

// A scope is what one client may reach: the files in its roots, to read
// and to write, and in the plugin directories, to read. The credential
// stores of the home and the system's own directories are never read,
// whatever the roots. Every path is checked with its links resolved, so a
// link cannot lead out.
type scope struct {
	roots   []string // absolute and clean; the first is the project
	home    string
	plugins []string
}

// ErrOutside is wrapped by the error for a path outside what the client
// may reach.
var ErrOutside = errors.New("outside the directories this session works in")

// errNoRoot is the error of a tool that needs a directory of the client's
// when the client has none.
var errNoRoot = errors.New("the client names no directory it works in (MCP roots), and the server has none: start taskd mcp in the project's directory, or with --project DIR")

// project is the client's first root, flow's project root; "" when the
// client has none.
func (sc *scope) project() string {
	if len(sc.roots) == 0 {
		return ""
	}
	return sc.roots[0]
}

// abs makes p absolute and clean: "~/" is the home directory, a relative
// path is relative to the project.
func (sc *scope) abs(p string) string {
	switch {
	case p == "~" && sc.home != "":
		return filepath.Clean(sc.home)
	case strings.HasPrefix(p, "~/") && sc.home != "":
		return filepath.Join(sc.home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	case sc.project() != "":
		return filepath.Join(sc.project(), p)
	}
	return filepath.Clean(p)
}

// inRoots returns nil when p (absolute, clean) lies in one of the
// client's roots, with every link on the way resolved.
func (sc *scope) inRoots(p string) error {
	return sc.inside(p, sc.roots)
}

// readable returns nil when p may be read: in a root or a plugin
// directory.
func (sc *scope) readable(p string) error {
	return sc.inside(p, append(append([]string(nil), sc.roots...), sc.plugins...))
}

func (sc *scope) inside(p string, dirs []string) error {
	if len(sc.roots) == 0 {
		return errNoRoot
	}
	real := resolvePath(p)
	for _, q := range []string{p, real} {
		if why := sc.denied(q); why != "" {
			return fmt.Errorf("%s is never read or written through taskd's MCP server: %s", p, why)
		}
	}
	for _, d := range dirs {
		if within(real, d) || within(real, resolvePath(d)) {
			return nil
		}
	}
	where := strings.Join(sc.roots, ", ")
	if real != p {
		return fmt.Errorf("%s (which leads to %s) is %w: %s", p, real, ErrOutside, where)
	}
	return fmt.Errorf("%s is %w: %s", p, ErrOutside, where)
}

// denied says why p is never read or written, or "".
func (sc *scope) denied(p string) string {
	for _, s := range readable.System {
		if within(p, s) {
			return s + " holds the system's own state"
		}
	}
	if sc.home == "" {
		return ""
	}
	for _, home := range []string{filepath.Clean(sc.home), resolvePath(sc.home)} {
		for _, c := range readable.Credentials {
			if within(p, filepath.Join(home, c)) {
				return "~/" + c + " holds credentials"
			}
		}
	}
	return ""
}

// maxFile bounds a file the server reads for a client (a workflow, an
// agent template).
const maxFile = 4 << 20

// readFile reads the regular file p, which must be readable in sc, of at
// most maxFile bytes. A FIFO or device is refused without blocking.
//
// The path is checked with its links resolved, and then read from the
// root or plugin directory that holds it, following no link: a directory
// swapped for a link between the check and the read fails the read
// instead of leading it out.
func (sc *scope) readFile(p string) ([]byte, error) {
	if err := sc.readable(p); err != nil {
		return nil, err
	}
	where := resolvePath(p)
	base, err := holder(p, where, append(append([]string(nil), sc.roots...), sc.plugins...))
	if err != nil {
		return nil, err
	}
	data, err := fsroot.ReadFile(base, where, maxFile)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return data, nil
}

// writeFile replaces the file p, which must lie in a root, with data,
// creating its directories: a new file renamed into place, so that a link
// at p is replaced, never followed. The path is checked with its links
// resolved, and then written from the root that holds it, following no
// link: a directory swapped for a link between the check and the write
// fails the write instead of leading it out.
func (sc *scope) writeFile(p string, data []byte) error {
	if err := sc.inRoots(p); err != nil {
		return err
	}
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() && fi.Mode().Type() != fs.ModeSymlink {
		return fmt.Errorf("%s is not a regular file (%s)", p, fi.Mode().Type())
	}
	// Where p is, with the links of its directory resolved: a link at p
	// itself is replaced.
	where := filepath.Join(resolvePath(filepath.Dir(p)), filepath.Base(p))
	base, err := holder(p, where, sc.roots)
	if err != nil {
		return err
	}
	if err := fsroot.WriteShared(base, where, data); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// mkdirAll creates directory dir, in a root, and those above it, from the
// root that holds it, following no link (as writeFile).
func (sc *scope) mkdirAll(dir string) error {
	if err := sc.inRoots(dir); err != nil {
		return err
	}
	where := resolvePath(dir)
	base, err := holder(dir, where, sc.roots)
	if err != nil {
		return err
	}
	if err := fsroot.MkdirShared(base, where); err != nil {
		return fmt.Errorf("make %s: %w", dir, err)
	}
	return nil
}

// holder returns the directory of dirs, with its links resolved, that
// holds where: p with the links of its existing part resolved, a path
// below it whose every directory was a directory when it was looked at.
func holder(p, where string, dirs []string) (string, error) {
	for _, d := range dirs {
		for _, b := range []string{resolvePath(d), d} {
			if within(where, b) {
				return b, nil
			}
		}
	}
	return "", fmt.Errorf("%s (which is %s) is %w: %s", p, where, ErrOutside, strings.Join(dirs, ", "))
}

// within reports whether p is dir or inside it (both absolute and clean).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// resolvePath is p with the links of its longest existing ancestor
// resolved (the rest appended as written, cleaned).
func resolvePath(p string) string {
	rest := ""
	for q := p; ; {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(q)
		if parent == q {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
		q = parent
	}
}
