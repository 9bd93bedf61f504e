package install

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// resolveExecutable returns the absolute path, with symlinks resolved, of
// the binary a service will run: exe, or the running binary when exe is
// empty. It refuses a binary that lives under the temporary directory or
// in a go-build directory, which is where 'go run' builds and deletes it,
// unless allowTemp is set (tests build the binary there on purpose).
func resolveExecutable(exe string, allowTemp bool) (string, error) {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", fmt.Errorf("find the taskd binary: %w", err)
		}
	}
	abs, err := filepath.Abs(exe)
	if err != nil {
		return "", fmt.Errorf("find the taskd binary: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("find the taskd binary: %w", err)
	}
	if !allowTemp && isTempBuild(real) {
		return "", fmt.Errorf("the taskd binary %s is in a temporary directory, where 'go run' builds it and deletes it on exit; "+
			"a service must run an installed binary: install taskd with 'go install github.com/taskd/taskd/cmd/taskd@latest' "+
			"(or 'go install ./cmd/taskd' in a clone), then run 'taskd install' with that binary", real)
	}
	return real, nil
}

// isTempBuild reports whether path is under the temporary directory (with
// symlinks resolved, as macOS's /var is /private/var) or in a go-build<digits>
// directory, as the go command makes them (GOTMPDIR may be anywhere).
func isTempBuild(path string) bool {
	tmp := os.TempDir()
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r
	}
	if within(path, tmp) || within(path, os.TempDir()) {
		return true
	}
	for _, part := range strings.Split(filepath.Dir(path), string(filepath.Separator)) {
		if n, ok := strings.CutPrefix(part, "go-build"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	return false
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
