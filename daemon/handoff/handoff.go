// Package handoff finds where a task that a Claude Code session wrote
// runs when its file names no directory: the session's project directory.
//
// Claude Code keeps a session's tasks in the list named by its session id
// (a UUID; CLAUDE_CODE_TASK_LIST_ID names another list, which is then no
// session's) and records the session in a transcript beside the task
// root: <config>/projects/<dir>/<session id>.jsonl, where <config> is
// $CLAUDE_CONFIG_DIR or ~/.claude, and <dir> the session's working
// directory with every character but A-Z a-z 0-9 replaced by "-" (cut to
// 200 characters and followed by a hash when longer). Its lines are JSON
// objects; those of messages carry "cwd", the session's directory (the
// first lines, of the session's queue, carry none).
//
// ProjectDir reads that: it follows no link below the projects directory,
// opens regular files only (never waiting on a FIFO), reads a bounded
// prefix, and returns a directory only when it exists. Its errors say why
// not, in words a person can act on.
package handoff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
	"golang.org/x/sys/unix"
)

// MaxScan bounds how much of a transcript is read for its directory: the
// first message, which carries it, holds the session's first prompt.
const MaxScan = 4 << 20

// IsSession reports whether a list id has the form of a Claude Code
// session id: a UUID, 8-4-4-4-12 hexadecimal digits. No other name is
// looked up, so a list's name never becomes a path.
func IsSession(list string) bool {
	if len(list) != 36 {
		return false
	}
	for i := 0; i < len(list); i++ {
		c := list[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// ErrNotSession is returned for a list id that is not a session id.
var ErrNotSession = errors.New("not a Claude Code session id")

// ProjectsDir is where Claude Code keeps its transcripts for the task
// root root: the root's sibling "projects".
func ProjectsDir(root string) string { return filepath.Join(filepath.Dir(root), "projects") }

// ProjectDir returns the working directory that session's transcript,
// under projects (ProjectsDir), records. When several project
// directories hold a transcript of that session, the one written last
// decides.
func ProjectDir(projects, session string) (string, error) {
	if !IsSession(session) {
		return "", ErrNotSession
	}
	name := session + ".jsonl"
	entries, err := fsroot.ReadDir(projects, "")
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no transcript of the session: %s does not exist", projects)
	}
	if err != nil {
		return "", fmt.Errorf("no transcript of the session: %w", err)
	}
	var best string
	var bestTime time.Time
	var problem error
	for _, e := range entries {
		if !e.IsDir() || e.Name()[0] == '.' {
			continue // a link to a directory is no directory here
		}
		path := filepath.Join(projects, e.Name(), name)
		fi, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			problem = err
			continue
		case fi.Mode()&fs.ModeSymlink != 0:
			problem = fmt.Errorf("its transcript %s is a symbolic link, which taskd does not follow", path)
			continue
		case !fi.Mode().IsRegular():
			problem = fmt.Errorf("its transcript %s is not a regular file (%s)", path, kind(fi.Mode()))
			continue
		}
		if best == "" || fi.ModTime().After(bestTime) {
			best, bestTime = path, fi.ModTime()
		}
	}
	if best == "" {
		if problem != nil {
			return "", problem
		}
		return "", fmt.Errorf("no transcript of the session in %s", projects)
	}
	dir, err := readCwd(projects, best)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return "", fmt.Errorf("its transcript %s records the directory %s, which does not exist", best, dir)
	case !fi.IsDir():
		return "", fmt.Errorf("its transcript %s records %s, which is not a directory", best, dir)
	}
	return dir, nil
}

// readCwd returns the first "cwd" of the transcript at path, inside
// projects: read without following a link, only if it is a regular
// file, at most MaxScan bytes of it.
func readCwd(projects, path string) (string, error) {
	f, err := fsroot.OpenFile(projects, path, os.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		if errors.Is(err, fsroot.ErrLink) {
			return "", fmt.Errorf("its transcript %s is (under) a symbolic link, which taskd does not follow", path)
		}
		return "", fmt.Errorf("read its transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("read its transcript: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("its transcript %s is not a regular file (%s)", path, kind(fi.Mode()))
	}
	r := bufio.NewReaderSize(io.LimitReader(f, MaxScan), 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // a long line: read on, within MaxScan
		}
		if dir, ok := cwdOf(line); ok {
			return dir, nil
		}
		line = line[:0]
		if err == io.EOF {
			if fi.Size() > MaxScan {
				return "", fmt.Errorf("its transcript %s names no directory in its first %d MiB", path, MaxScan>>20)
			}
			return "", fmt.Errorf("its transcript %s names no directory", path)
		}
		if err != nil {
			return "", fmt.Errorf("read its transcript: %w", err)
		}
	}
}

// cwdOf returns the "cwd" of one transcript line, if it has a usable one:
// an absolute, clean path.
func cwdOf(line []byte) (string, bool) {
	if !bytes.Contains(line, []byte(`"cwd"`)) {
		return "", false
	}
	var v struct {
		Cwd string `json:"cwd"`
	}
	if json.Unmarshal(line, &v) != nil || v.Cwd == "" || !filepath.IsAbs(v.Cwd) || bytes.IndexByte([]byte(v.Cwd), 0) >= 0 {
		return "", false
	}
	return filepath.Clean(v.Cwd), true
}

// kind names what a file that is not a regular file is.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}
