package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/install"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/proc"
	"github.com/taskd/taskd/taskfile"
	"github.com/taskd/taskd/workflows"
)

// serviceDoc is where the service's environment is explained.
const serviceDoc = "https://github.com/taskd/taskd/blob/main/docs/service.md#environment"

// checkConfig checks the configuration file and returns the configuration
// the other checks use: the file's, or the defaults when it is bad.
func (d *doctor) checkConfig() (cfg *config.Config, fc *config.FileConfig) {
	path, optional := d.configFlag, d.configFlag == ""
	if optional {
		path = config.DefaultConfigPath()
	}
	defaults := func() (*config.Config, *config.FileConfig) {
		cfg, _ := config.NewConfig("", nil, nil)
		return cfg, nil
	}
	fc, err := config.LoadFileConfig(path, optional)
	if err == nil {
		cfg, err = config.NewConfig("", nil, fc)
	}
	if err != nil {
		d.add(levelFail, "config", err.Error(),
			"correct "+d.path(path)+" ('taskd run' refuses to start with it; docs/configuration.md describes the format)")
		return defaults()
	}
	if _, err := os.Stat(path); optional && errors.Is(err, fs.ErrNotExist) {
		d.add(levelOK, "config", d.path(path)+" does not exist: the built-in defaults apply", "")
		return cfg, fc
	}
	d.add(levelOK, "config", fmt.Sprintf("%s: %d %s, default agent %s", d.path(path),
		len(cfg.Profiles), plural(len(cfg.Profiles), "profile", "profiles"), cfg.DefaultAgent), "")
	return cfg, fc
}

// checkRoot checks the task root, and returns it and whether it exists as
// a directory the daemon would serve.
func (d *doctor) checkRoot() (string, bool) {
	root, err := daemon.ResolveRoot(d.rootFlag, d.getenv)
	if err != nil {
		d.add(levelFail, "root", err.Error(), "give --root DIR, or set TASKD_ROOT")
		return "", false
	}
	from := "the default"
	switch {
	case d.rootFlag != "":
		from = "--root"
	case d.getenv("TASKD_ROOT") != "":
		from = "$TASKD_ROOT"
	case d.getenv("CLAUDE_CONFIG_DIR") != "":
		from = "$CLAUDE_CONFIG_DIR/tasks"
	}
	p := d.path(root)
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(levelWarn, "root", p+" ("+from+") does not exist yet", "'taskd run' creates it; or: mkdir -p -m 700 "+p)
		return root, false
	case err != nil:
		d.add(levelFail, "root", err.Error(), "make "+p+" a directory you can read, or choose another root (--root, $TASKD_ROOT)")
		return root, false
	case !fi.IsDir():
		d.add(levelFail, "root", p+" ("+from+") is not a directory", "move it away, or choose another root (--root, $TASKD_ROOT)")
		return root, false
	}
	if !d.private(root, "root", p) {
		return root, false
	}
	d.add(levelOK, "root", fmt.Sprintf("%s (%s), mode %04o", p, from, fi.Mode().Perm()), "")
	return root, true
}

// private checks path with the daemon's rule for a root (its user's, not
// writable by others), adding a failure when it does not pass.
func (d *doctor) private(path, what, shown string) bool {
	return d.refused(fsroot.CheckPrivate(path), path, what, shown)
}

// refused adds a failure for err, the daemon's refusal of the directory
// at path, and reports whether there was none.
func (d *doctor) refused(err error, path, what, shown string) bool {
	var u *fsroot.UnsafeError
	switch {
	case err == nil:
		return true
	case errors.As(err, &u) && u.Kind == fsroot.ErrWritable:
		mode := ""
		if fi, err := os.Stat(path); err == nil {
			mode = fmt.Sprintf(" (mode %04o)", fi.Mode().Perm())
		}
		d.add(levelFail, what, shown+" can be written by other users"+mode+": the daemon refuses it, since they could make it run commands as you",
			"chmod go-w "+shown)
	case errors.As(err, &u) && u.Kind == fsroot.ErrNotOwned:
		d.add(levelFail, what, d.path(u.Path)+" is "+u.Problem+": the daemon refuses it, since its owner could make it run commands as you",
			fmt.Sprintf("chown %d %s as root, or run taskd as its owner", os.Geteuid(), d.path(u.Path)))
	case errors.As(err, &u):
		d.add(levelFail, what, d.path(u.Path)+" is "+u.Problem+": the daemon refuses the list, since it follows no link in its own files",
			"rm "+d.path(u.Path)+" (the daemon makes its own directory there)")
	default:
		d.add(levelFail, what, err.Error(), "make "+shown+" readable by you")
	}
	return false
}

// checkLists checks each list of root (or each --list): a directory of its
// own that others cannot write to, and which of its task files a daemon
// rejected.
func (d *doctor) checkLists(root string) {
	names := d.lists
	if len(names) == 0 {
		entries, err := fsroot.ReadDirectory(root)
		if err != nil {
			d.add(levelFail, "lists", err.Error(), "make "+d.path(root)+" readable by you")
			return
		}
		for _, e := range entries {
			name := e.Name()
			switch {
			case strings.HasPrefix(name, "."):
			case e.Type().IsRegular() && strings.HasSuffix(name, ".json"):
				p := d.path(filepath.Join(root, name))
				d.add(levelWarn, "root", p+" is a task file in the root, where no daemon looks",
					"move it into a list (a directory of the root): mkdir -p -m 700 "+d.path(filepath.Join(root, "LIST"))+" && mv "+p+" "+d.path(filepath.Join(root, "LIST"))+"/")
			case e.IsDir() || e.Type()&fs.ModeSymlink != 0:
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			d.add(levelOK, "lists", "none yet: a list is a directory of task files in the root, such as "+d.path(filepath.Join(root, "demo")), "")
		}
	}
	for _, name := range names {
		d.checkList(root, name)
	}
}

func (d *doctor) checkList(root, name string) {
	path := filepath.Join(root, name)
	what, p := "list "+name, d.path(path)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(levelFail, what, "no list "+p, "create it: mkdir -m 700 "+p+" (or 'taskd submit --list "+name+"')")
		return
	case err != nil:
		d.add(levelFail, what, err.Error(), "make "+p+" readable by you")
		return
	case fi.Mode()&fs.ModeSymlink != 0:
		d.add(levelWarn, what, p+" is a symbolic link: the daemon does not serve it",
			"put the directory itself in the root (mv it there), or use its own root with --root")
		return
	case !fi.IsDir():
		d.add(levelFail, what, p+" is not a directory", "move it out of the root")
		return
	}
	if !d.refused(area.CheckList(path, false), path, what, p) {
		return
	}
	dir, err := taskfile.Open(path)
	if err != nil {
		d.add(levelFail, what, err.Error(), "make "+p+" readable by you")
		return
	}
	ids, misnamed, err := dir.Names()
	if err != nil {
		d.add(levelFail, what, err.Error(), "make "+p+" readable by you")
		return
	}
	for _, name := range misnamed {
		problem, fix, _ := taskfile.Misnamed(name)
		d.add(levelWarn, what, name+": "+problem, fix)
	}
	d.checkLocks(path, what)
	var rejected []string
	for _, id := range ids {
		note, err := os.Stat(filepath.Join(path, ".taskd", "rejected", id+".json.txt"))
		if err != nil {
			continue
		}
		if file, err := os.Stat(dir.File(id)); err == nil && !note.ModTime().Before(file.ModTime()) {
			rejected = append(rejected, id)
		}
	}
	found := fmt.Sprintf("%d task %s", len(ids), plural(len(ids), "file", "files"))
	if len(rejected) > 0 {
		d.add(levelWarn, what, fmt.Sprintf("%s, %d rejected by the daemon: %s", found, len(rejected), strings.Join(rejected, ", ")),
			"'taskd status --list "+name+"' says why and how to fix each; the notes are in "+d.path(filepath.Join(path, ".taskd", "rejected"))+"/")
		return
	}
	d.add(levelOK, what, found, "")
}

// checkLocks fails on a task's lock (<id>.json.lock, a directory while
// Claude Code or taskd holds it) that is something else (a socket, a
// FIFO, a file): no writer can take the lock while it is there, and the
// daemon holds the task.
func (d *doctor) checkLocks(path, what string) {
	entries, _ := fsroot.ReadDirectory(path)
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json.lock")
		if !ok || !taskfile.ValidID(id) || e.IsDir() {
			continue
		}
		p := d.path(filepath.Join(path, e.Name()))
		d.add(levelFail, what, e.Name()+" is "+fsroot.KindOf(e.Type())+", not a lock directory: no writer can take task "+id+"'s lock while it is there, so the daemon holds the task",
			"rm "+p)
	}
}

// checkDaemon reports whether a daemon holds root's lock, and its pid.
func (d *doctor) checkDaemon(root string) daemonState {
	held, pid, err := daemon.LockHolder(root)
	switch {
	case errors.Is(err, fsroot.ErrNotRegular):
		d.add(levelFail, "daemon", err.Error(), "rm "+d.path(daemon.LockFile(root))+" (a daemon makes it anew)")
	case err != nil:
		d.add(levelFail, "daemon", err.Error(), "keep the task root on a local file system, which supports file locks")
	case held && pid > 0:
		d.add(levelOK, "daemon", fmt.Sprintf("running (pid %d) on %s", pid, d.path(root)), "")
	case held:
		d.add(levelOK, "daemon", "running on "+d.path(root), "")
	default:
		d.add(levelWarn, "daemon", "none running on "+d.path(root)+": tasks wait until one runs",
			"'taskd start' starts the user service; or run 'taskd run' yourself")
	}
	if err != nil {
		return daemonState{err: err.Error()}
	}
	return daemonState{running: held, pid: pid}
}

// checkService reports the user service; ds says whether a daemon holds
// the root's lock.
func (d *doctor) checkService(ctx context.Context, ds daemonState) {
	st, err := d.service(ctx)
	first := func(err error) string {
		line, _, _ := strings.Cut(err.Error(), "\n")
		return line
	}
	switch {
	case errors.Is(err, install.ErrNoServiceManager):
		d.add(levelWarn, "service", first(err),
			"run the daemon yourself: 'taskd run', or in the background: nohup taskd run >>\"$HOME/taskd.log\" 2>&1 &")
	case err != nil:
		d.add(levelWarn, "service", first(err), "'taskd help install' says what the user service needs")
	case !st.Installed:
		d.add(levelWarn, "service", "not installed", "'taskd install' runs the daemon as a user service that starts at login and restarts after a crash")
	case !st.Running:
		detail := "installed (" + d.path(st.File) + ") but not running"
		if st.Detail != "" {
			detail += ": " + st.Detail
		}
		d.add(levelFail, "service", detail, "'taskd start'; if it stops again, its logs say why: "+st.Logs)
	case !ds.running && ds.err == "":
		d.add(levelWarn, "service", "running, but no daemon holds this root's lock: the service serves another root",
			"compare the --root in "+d.path(st.File)+" with this root; 'taskd install --root DIR' changes it")
	default:
		d.add(levelOK, "service", "installed ("+d.path(st.File)+") and running", "")
	}
}

// checkSupervision says how the daemon pid (0: one started here) kills
// what an attempt started: by cgroup, or by environment, a warning.
func (d *doctor) checkSupervision(pid int) {
	mode, detail := d.supervision(pid)
	if pid == 0 {
		detail = "a daemon started here: " + detail
	}
	if mode == proc.ByCgroup {
		d.add(levelOK, "supervision", "by cgroup: "+detail, "")
		return
	}
	d.add(levelWarn, "supervision", "by environment (each process carrying the attempt's TASKD_RUN_DIR is killed; one that clears its environment escapes): "+detail,
		"run the daemon as the user service ('taskd install': its unit delegates a cgroup to it), or where it may write its own cgroup v2 (docs/security.md#processes)")
}

// checkProfiles checks that each profile's program is found as the daemon
// would find it: on the running daemon's PATH (pid), else on this one's.
// A missing program fails the check when the configuration file asks for
// the profile, and is a warning for a built-in profile nothing names.
func (d *doctor) checkProfiles(cfg *config.Config, fc *config.FileConfig, pid int) {
	path, exe, where := d.getenv("PATH"), d.exe, "this shell's PATH"
	if pid > 0 {
		if p, e, ok := d.daemonEnv(pid); ok {
			path, exe, where = p, e, fmt.Sprintf("the PATH of the daemon (pid %d)", pid)
		}
	}
	agentPath := agent.AgentPath(exe, path)
	for _, name := range slices.Sorted(maps.Keys(cfg.Profiles)) {
		p := cfg.Profiles[name]
		what := "profile " + name
		prog, err := agent.ProgramPath(p, agentPath)
		if err == nil {
			d.add(levelOK, what, p.Command[0]+" is "+d.path(prog), "")
			continue
		}
		detail := fmt.Sprintf("%s is not on %s", p.Command[0], where)
		if strings.Contains(p.Command[0], "/") {
			detail = p.Command[0] + " does not exist"
		}
		fix := "install it, or make its directory part of the daemon's PATH (" + serviceDoc + "), or give the profile's command as an absolute path in the configuration file"
		switch {
		case configured(fc, name):
		case name == cfg.DefaultAgent:
			d.add(levelWarn, what, detail+"; it is the default agent, for workflow steps and tasks that name none",
				"install it, or set \"defaultAgent\" in the configuration file to a profile you have (such as exec, for shell commands)")
			continue
		default:
			d.add(levelWarn, what, detail+"; nothing in the configuration asks for it", "install "+p.Command[0]+" to use this profile")
			continue
		}
		d.add(levelFail, what, detail, fix)
	}
}

// configured reports whether the configuration file asks for profile
// name: it defines it, maps an agent to it, or makes it the default.
func configured(fc *config.FileConfig, name string) bool {
	if fc == nil {
		return false
	}
	if _, ok := fc.Profiles[name]; ok {
		return true
	}
	for _, p := range fc.Agents {
		if p == name {
			return true
		}
	}
	def := fc.DefaultAgent
	if mapped, ok := fc.Agents[def]; ok {
		def = mapped
	}
	return def == name
}

// checkWorkflows loads the workflows every list sees: the built-in ones,
// the user's, and the list's own. Each problem is reported once.
func (d *doctor) checkWorkflows(root string, usable bool) {
	dirs := [][]string{workflows.Dirs("")}
	if usable {
		entries, _ := fsroot.ReadDirectory(root)
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && (len(d.lists) == 0 || slices.Contains(d.lists, e.Name())) {
				dirs = append(dirs, workflows.Dirs(filepath.Join(root, e.Name())))
			}
		}
	}
	seen := map[string]bool{}
	files := map[string]bool{}
	failed := false
	for _, ds := range dirs {
		set, problems := workflows.Load(ds...)
		for _, id := range set.IDs() {
			if def, _ := set.Get(id); !def.Builtin {
				files[def.File] = true
			}
		}
		for _, p := range problems {
			if seen[p.String()] {
				continue
			}
			seen[p.String()] = true
			file := d.path(p.File)
			if p.Warning {
				d.add(levelWarn, "workflow", p.String(), "the workflow works as written; 'taskd workflows validate "+file+"' lists what to improve")
				continue
			}
			failed = true
			d.add(levelFail, "workflow", p.String(), "correct it ('taskd workflows validate "+file+"' checks it); until then tasks that name it are rejected")
		}
	}
	if !failed {
		d.add(levelOK, "workflows", fmt.Sprintf("%d built-in and %d of yours load without errors", len(workflows.Builtin()), len(files)), "")
	}
}
