// Package catalog holds what a list's tasks can name besides their own
// fields: workflows (the built-ins, overridden by taskd's configuration
// directory, overridden by the list's .taskd/workflows) and command files
// (.md files in the configuration directory's commands/ and the list's
// .taskd/commands). Each list's sets are reloaded when a file in those
// directories changes, checked at most once a second. A Catalog is safe
// for concurrent use.
package catalog

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/workflows"
)

// ErrUnknownWorkflow is returned (wrapped) for a workflowType no workflow
// directory defines.
var ErrUnknownWorkflow = errors.New("unknown workflow")

// ErrInvalidWorkflow is returned (wrapped) for a workflowType whose
// definition has errors, traps such as a cycle with no way out included.
var ErrInvalidWorkflow = errors.New("invalid workflow")

// A Catalog holds the workflows and command files of every list.
type Catalog struct {
	dir string // taskd's configuration directory
	log *slog.Logger

	mu       sync.Mutex // protects the fields below
	byDir    map[string]*catalog
	commands map[string]*Commands
}

// New returns a catalog of the workflows and commands in configDir and in
// each list's area, that logs problems of user workflow files to log.
func New(configDir string, log *slog.Logger) *Catalog {
	return &Catalog{dir: configDir, log: log, byDir: map[string]*catalog{}, commands: map[string]*Commands{}}
}

type catalog struct {
	set     *workflows.Set
	stamp   string // names, sizes and times of the directories' files
	checked time.Time
}

// Workflows returns the workflows of the list at listDir. Problems in
// user workflow files are logged when the set is (re)loaded; broken
// workflows are simply not navigable.
func (c *Catalog) Workflows(listDir string) *workflows.Set {
	c.mu.Lock()
	defer c.mu.Unlock()
	cat := c.byDir[listDir]
	if cat != nil && time.Since(cat.checked) < time.Second {
		return cat.set
	}
	dirs := []string{filepath.Join(c.dir, "workflows"), area.WorkflowsDir(listDir)}
	stamp := dirStamp(dirs)
	if cat != nil && cat.stamp == stamp {
		cat.checked = time.Now()
		return cat.set
	}
	set, problems := workflows.Load(dirs...)
	for _, p := range problems {
		c.log.Warn("workflow problem", "list", listDir, "problem", p.String())
	}
	c.byDir[listDir] = &catalog{set: set, stamp: stamp, checked: time.Now()}
	return set
}

// dirStamp summarises the files of dirs so that a change is noticed.
func dirStamp(dirs []string) string {
	var b strings.Builder
	for _, dir := range dirs {
		entries, err := fsroot.ReadDirectory(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "%s/%s:%d:%d;", dir, e.Name(), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// CheckWorkflow reports whether workflow id can be walked by a task of the
// list at listDir: an error wrapping ErrUnknownWorkflow or
// ErrInvalidWorkflow says why not.
func (c *Catalog) CheckWorkflow(listDir, id string) error {
	set := c.Workflows(listDir)
	if _, _, ok := set.Lookup(id); ok {
		return nil
	}
	if def, ok := set.Get(id); ok {
		var msgs []string
		for _, p := range def.Problems {
			if p.Blocks(navigator.Strict) {
				msgs = append(msgs, p.String())
			}
		}
		return fmt.Errorf("%w %q: its definition has errors: %s", ErrInvalidWorkflow, id, strings.Join(msgs, "; "))
	}
	if p, ok := set.UnreadOf(id); ok {
		return fmt.Errorf("%w %q: its file cannot be read: %s", ErrInvalidWorkflow, id, p)
	}
	return fmt.Errorf("%w %q (known: %s)", ErrUnknownWorkflow, id, strings.Join(set.IDs(), ", "))
}
