package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/flow"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/jsonorder"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
)

// navigate is flow's Navigate: one call of the navigator on a task file
// (flow.NavigateFile, the function of taskd navigate and the daemon) or,
// without one, on a workflow. The task file must be in a list of the
// server's task root.
func (s *Server) navigate(ctx context.Context, sc *scope, args *jsonorder.Object) (any, error) {
	var in navigator.Input
	var taskPath string
	for _, f := range []struct {
		key string
		to  *string
	}{{"taskFilePath", &taskPath}, {"workflowType", &in.WorkflowType}, {"result", &in.Result},
		{"description", &in.Description}, {"stepId", &in.StepID}} {
		v, err := stringArg(args, f.key)
		if err != nil {
			return nil, err
		}
		*f.to = v
	}
	in.Autonomy = boolArg(args, "autonomy")
	in.ProjectRoot = sc.project()
	cat := &navCatalog{s: s, sc: sc}
	var resp *navigator.Response
	var wt *navigator.WriteThrough
	var err error
	if taskPath != "" {
		path := sc.abs(taskPath)
		if cat.listDir, err = s.taskList(path); err != nil {
			return nil, err
		}
		resp, wt, err = flow.NavigateFile(ctx, cat, path, in, flow.NavigateFileOptions{})
	} else {
		resp, _, err = navigator.Navigate(cat, nil, in)
	}
	var nm *navigator.NoMatchError
	var bad *taskfile.BadFileError
	switch {
	case errors.As(err, &nm):
		return jsonorder.Decode(nm.AppendJSON(nil), jsonorder.Options{})
	case cat.err != nil:
		return nil, cat.err
	case errors.Is(err, navigator.ErrUnknownWorkflow) && cat.broken != nil:
		return nil, brokenError(cat.broken)
	case errors.Is(err, navigator.ErrTaskFile):
		return nil, navigator.TaskFileError(taskPath)
	case errors.As(err, &bad):
		return nil, fmt.Errorf("%w\n%s", err, bad.Fix)
	case err != nil:
		return nil, err
	}
	if wt != nil && wt.IDWarning != "" {
		s.opts.Log.Warn(wt.IDWarning)
	}
	return jsonorder.Decode(resp.AppendJSON(nil), jsonorder.Options{})
}

// taskList checks that path names a task file in a list of the server's
// root, <root>/<list>/<id>.json, whose root and list a daemon would
// serve, and returns the list's directory.
func (s *Server) taskList(path string) (string, error) {
	list := filepath.Dir(path)
	root := filepath.Dir(list)
	stem, ok := strings.CutSuffix(filepath.Base(path), ".json")
	switch {
	case root != s.opts.Root && resolvePath(root) != resolvePath(s.opts.Root):
		return "", fmt.Errorf("%s is not a task file of the task root %s: taskd's MCP server reads and writes task files only there, as <root>/<list>/<id>.json", path, s.opts.Root)
	case !ok || !taskfile.ValidID(stem):
		return "", fmt.Errorf("%s is not a task file: a task file is named <id>.json, the id 1-128 of A-Z a-z 0-9 _ -", path)
	}
	if err := s.checkList(list); err != nil {
		return "", err
	}
	return list, nil
}

// checkRoot returns nil when the server's root is one a daemon serves:
// its user's, not writable by others. A root that does not exist yet is
// fine (nothing is in it).
func (s *Server) checkRoot() error {
	err := fsroot.CheckPrivate(s.opts.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// checkList returns nil when the list at dir is one a daemon serves: in a
// root it serves, its user's, not a link, with a safe .taskd area. A list
// that does not exist yet is fine.
func (s *Server) checkList(dir string) error {
	if err := s.checkRoot(); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("list %s is a symbolic link: taskd serves no list that is one", dir)
	}
	return area.CheckList(dir, false)
}
