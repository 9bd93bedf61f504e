package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/workflows"
)

// ErrUnknownWorkflow is returned (wrapped) for a workflowType no workflow
// directory defines.
var ErrUnknownWorkflow = errors.New("unknown workflow")

// ErrInvalidWorkflow is returned (wrapped) for a workflowType whose
// definition has errors, traps such as a cycle with no way out included.
var ErrInvalidWorkflow = errors.New("invalid workflow")

// catalogs holds each list's workflows: the built-ins, overridden by
// $XDG_CONFIG_HOME/taskd/workflows, overridden by <list>/.taskd/workflows.
// A list's set is loaded again when a file in those directories changes
// (checked at most once a second, when a workflow is needed).
type catalogs struct {
	mu    sync.Mutex // protects byDir
	byDir map[string]*catalog
}

type catalog struct {
	set     *workflows.Set
	stamp   string // names, sizes and times of the directories' files
	checked time.Time
}

// workflowsFor returns the workflows of the list at listDir. Problems in
// user workflow files are logged when the set is (re)loaded; broken
// workflows are simply not navigable.
func (d *Daemon) workflowsFor(listDir string) *workflows.Set {
	c := &d.catalogs
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byDir == nil {
		c.byDir = map[string]*catalog{}
	}
	cat := c.byDir[listDir]
	if cat != nil && time.Since(cat.checked) < time.Second {
		return cat.set
	}
	dirs := []string{filepath.Join(d.cfg.Dir, "workflows"), area.WorkflowsDir(listDir)}
	stamp := dirStamp(dirs)
	if cat != nil && cat.stamp == stamp {
		cat.checked = time.Now()
		return cat.set
	}
	set, problems := workflows.Load(dirs...)
	for _, p := range problems {
		d.log.Warn("workflow problem", "list", listDir, "problem", p.String())
	}
	c.byDir[listDir] = &catalog{set: set, stamp: stamp, checked: time.Now()}
	return set
}

// dirStamp summarises the files of dirs so that a change is noticed.
func dirStamp(dirs []string) string {
	var b strings.Builder
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
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

// checkWorkflow reports whether workflow id can be walked for list l.
func (d *Daemon) checkWorkflow(l *list, id string) error {
	set := d.workflowsFor(l.dir.Path())
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
	return fmt.Errorf("%w %q (known: %s)", ErrUnknownWorkflow, id, strings.Join(set.IDs(), ", "))
}
