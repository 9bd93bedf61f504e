package catalog

import (
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/internal/fsroot"
)

// Commands is the command files a list's prompts can invoke as /name:
// $XDG_CONFIG_HOME/taskd/commands/<name>.md, overridden by
// <list>/.taskd/commands/<name>.md.
type Commands struct {
	files   map[string]*prompt.CommandFile
	errs    map[string]error // files that do not parse, by name
	stamp   string
	checked time.Time
}

// Has reports whether name is a command file (valid or not: an invalid one
// is reported when it is used, with its error).
func (c *Commands) Has(name string) bool {
	_, ok := c.files[name]
	_, bad := c.errs[name]
	return ok || bad
}

// Get returns command name, or the reason it cannot be used.
func (c *Commands) Get(name string) (*prompt.CommandFile, error) {
	if err := c.errs[name]; err != nil {
		return nil, err
	}
	return c.files[name], nil
}

// commandDirs are the directories command files load from, lowest priority
// first.
func commandDirs(configDir, listDir string) []string {
	return []string{filepath.Join(configDir, "commands"), area.CommandsDir(listDir)}
}

// Commands returns the command files of the list at listDir, reloaded
// when the directories change (checked at most once a second).
func (c *Catalog) Commands(listDir string) *Commands {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := c.commands[listDir]
	if cs != nil && time.Since(cs.checked) < time.Second {
		return cs
	}
	dirs := commandDirs(c.dir, listDir)
	stamp := dirStamp(dirs)
	if cs != nil && cs.stamp == stamp {
		cs.checked = time.Now()
		return cs
	}
	cs = loadCommands(dirs)
	cs.stamp, cs.checked = stamp, time.Now()
	c.commands[listDir] = cs
	return cs
}

// maxCommandFile bounds the size of a command file read from a list.
const maxCommandFile = 1 << 20

// LoadCommands reads the command files of the list at listDir, and of
// taskd's configuration directory configDir, without a cache: for a
// command run once.
func LoadCommands(configDir, listDir string) *Commands {
	return loadCommands(commandDirs(configDir, listDir))
}

// loadCommands reads every <name>.md of dirs; later directories win.
func loadCommands(dirs []string) *Commands {
	cs := &Commands{files: map[string]*prompt.CommandFile{}, errs: map[string]error{}}
	for i, dir := range dirs {
		// The list's own directory (the last) is read following no link
		// (package fsroot): a link there loads nothing, and a command
		// file that is one is refused with that reason.
		readDir := fsroot.ReadDirectory
		readFile := fsroot.ReadRegular
		if list := filepath.Dir(filepath.Dir(dir)); i == len(dirs)-1 && filepath.Base(filepath.Dir(dir)) == area.Name {
			readDir = func(p string) ([]fs.DirEntry, error) { return fsroot.ReadDir(list, p) }
			readFile = func(p string) ([]byte, error) { return fsroot.ReadFile(list, p, maxCommandFile) }
		}
		entries, err := readDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".md")
			if !ok || e.IsDir() {
				continue
			}
			data, err := readFile(filepath.Join(dir, e.Name()))
			if err == nil {
				var cf *prompt.CommandFile
				if cf, err = prompt.ParseCommandFile(name, data); err == nil {
					cs.files[name] = cf
					delete(cs.errs, name)
					continue
				}
			}
			cs.errs[name] = err
			delete(cs.files, name)
		}
	}
	return cs
}
