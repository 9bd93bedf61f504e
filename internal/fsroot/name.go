package fsroot

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Errors of the path rule. Callers branch on them with errors.Is.
var (
	// ErrBadName is wrapped by the error for an element that cannot be one
	// name in a directory.
	ErrBadName = errors.New("not a plain file name")
	// ErrEscape is wrapped by the error for a path outside its base.
	ErrEscape = errors.New("outside the directory it must stay in")
	// ErrLink is wrapped by the error for a symbolic link met on a path
	// that taskd resolves without following links.
	ErrLink = errors.New("a symbolic link, which taskd does not follow here")
)

// MaxName is the longest name CheckName accepts, in bytes (NAME_MAX).
const MaxName = 255

// CheckName returns nil if name can be one element of a path inside a base:
// not empty, at most MaxName bytes, no "/" and no NUL, and not "." or "..".
// Otherwise it returns an error wrapping ErrBadName that says why.
func CheckName(name string) error {
	why := ""
	switch {
	case name == "":
		why = "it is empty"
	case name == "." || name == "..":
		why = "it names a directory itself or its parent"
	case len(name) > MaxName:
		why = fmt.Sprintf("it is %d bytes long, more than %d", len(name), MaxName)
	case strings.ContainsRune(name, '/'):
		why = "it contains a slash"
	case strings.ContainsRune(name, 0):
		why = "it contains a NUL byte"
	default:
		return nil
	}
	return fmt.Errorf("%q is %w: %s", name, ErrBadName, why)
}

// Join returns base joined with elems, each of which must pass CheckName:
// a path that is inside base by construction.
func Join(base string, elems ...string) (string, error) {
	for _, e := range elems {
		if err := CheckName(e); err != nil {
			return "", err
		}
	}
	return filepath.Join(append([]string{base}, elems...)...), nil
}

// Split returns the elements of path inside base, as every operation of
// this package takes them: path, relative (to base) or absolute, must be
// inside base once cleaned, and not base itself (ErrEscape), and each of
// its elements a plain name (ErrBadName). No link is looked at: use the
// elements with the operations here, which follow none.
func Split(base, path string) ([]string, error) { return split(base, path) }

// split returns the elements of path relative to base. path may be
// relative (to base) or absolute; either way, once cleaned, it must be
// inside base and not base itself, and every element must pass CheckName.
func split(base, path string) ([]string, error) {
	rel := path
	if filepath.IsAbs(path) {
		var err error
		rel, err = filepath.Rel(filepath.Clean(base), filepath.Clean(path))
		if err != nil {
			return nil, fmt.Errorf("%s: %w (%s)", path, ErrEscape, base)
		}
	} else if strings.Contains(path, "\x00") {
		return nil, fmt.Errorf("%q: %w: it contains a NUL byte", path, ErrBadName)
	}
	if rel == "." || rel == "" {
		return nil, fmt.Errorf("%s: %w: it is the directory %s itself", path, ErrBadName, base)
	}
	elems := strings.Split(filepath.ToSlash(rel), "/")
	for _, e := range elems {
		if e == ".." {
			return nil, fmt.Errorf("%s: %w (%s)", path, ErrEscape, base)
		}
		if err := CheckName(e); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return elems, nil
}
