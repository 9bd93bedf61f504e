package agent

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/internal/fsroot"
)

// The run folder's files are opened with plain system calls. An *os.File
// opened with os.OpenFile tries to register the file with Go's network
// poller, which refuses regular files: two fcntl calls to make the file
// non-blocking, the refused epoll_ctl, two more to undo it — five system
// calls per file, and a task's run opens half a dozen. None of them
// becomes an *os.File (the agent writes into pipes, read into its logs).
//
// Errors are *fs.PathError, as the os package's.

// devNull returns the null device, opened once for every agent's stdin
// (exec.Cmd opens it anew for each process otherwise), or nil if it cannot
// be opened.
var devNull = sync.OnceValue(func() *os.File {
	f, err := os.Open(os.DevNull)
	if err != nil {
		return nil
	}
	return f
})

// openRaw opens path, which must be inside the list directory base, with
// flags (O_CLOEXEC added): through package fsroot, so that no link is
// followed on the way, a file written is never one with other hard links,
// and what is created is private (0700 directories, 0600 files).
func openRaw(base, path string, flags int) (int, error) {
	return fsroot.OpenFD(base, path, flags)
}

// writeAll writes data to fd at off (off < 0: at the file offset).
func writeAll(fd int, data []byte, off int64, path string) error {
	for len(data) > 0 {
		var n int
		var err error
		if off >= 0 {
			n, err = syscall.Pwrite(fd, data, off)
			off += int64(max(n, 0))
		} else {
			n, err = syscall.Write(fd, data)
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "write", Path: path, Err: err}
		}
		if n == 0 {
			return &fs.PathError{Op: "write", Path: path, Err: io.ErrShortWrite}
		}
		data = data[n:]
	}
	return nil
}

// writeNewFile writes data to path inside the list directory base,
// creating it (mode 0600) or truncating it, as os.WriteFile does.
func writeNewFile(base, path string, data []byte) error {
	fd, err := openRaw(base, path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC)
	if err != nil {
		return err
	}
	err = writeAll(fd, data, -1, path)
	if cerr := syscall.Close(fd); err == nil && cerr != nil {
		err = &fs.PathError{Op: "close", Path: path, Err: cerr}
	}
	return err
}

// writeNewFileIn is writeNewFile of the file name in the run folder open
// as folder. In a folder this attempt made (made), the file cannot be
// there yet: it is created exclusively, which needs no look at what is
// there before or after the open (fsroot.OpenFD), and anything there
// fails it.
func writeNewFileIn(folder *fsroot.Dir, name string, data []byte, made bool) error {
	flags := syscall.O_WRONLY | syscall.O_CREAT | syscall.O_TRUNC
	if made {
		flags = syscall.O_WRONLY | syscall.O_CREAT | syscall.O_EXCL
	}
	fd, err := folder.OpenFD(name, flags)
	if err != nil {
		return err
	}
	err = writeAll(fd, data, -1, name)
	if cerr := syscall.Close(fd); err == nil && cerr != nil {
		err = &fs.PathError{Op: "close", Path: name, Err: cerr}
	}
	return err
}

// writeJSONIn is WriteJSONFile of the file name in the run folder open as
// folder: replaced whole.
func writeJSONIn(folder *fsroot.Dir, name string, v any) error {
	data, err := jsonRecord(v)
	if err != nil {
		return err
	}
	return folder.WriteFile(name, data)
}

// logNames are the logs of a run folder, each made at its first byte.
var logNames = [...]string{"stdout.log", "stderr.log", "transcript.log"}

// ClearEarlierLogs removes the logs an earlier run of the same attempt
// number left in the run folder dir of the list directory base, open as
// folder: this attempt's are made at their first byte, and one it never
// writes must not show the earlier run's. A log's name taken by anything
// but a regular file (a link, a FIFO) is refused, neither followed nor
// waited on, and left where it is.
func ClearEarlierLogs(folder *fsroot.Dir, base, dir string) error {
	for _, name := range logNames {
		fd, err := folder.OpenFD(name, syscall.O_RDONLY)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		syscall.Close(fd)
		if err := fsroot.Remove(base, filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// ReadTail returns at most the last n bytes of the file at path inside the
// list directory base.
func ReadTail(base, path string, n int64) ([]byte, error) {
	fd, err := openRaw(base, path, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	return readTailFD(fd, path, n)
}

// readTailIn is ReadTail of the file name in the run folder open as
// folder.
func readTailIn(folder *fsroot.Dir, name string, n int64) ([]byte, error) {
	fd, err := folder.OpenFD(name, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	return readTailFD(fd, name, n)
}

// readTailFD is ReadTail of the file open as fd, at path.
func readTailFD(fd int, path string, n int64) ([]byte, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	off := max(st.Size-n, 0)
	buf := make([]byte, st.Size-off)
	got := 0
	for got < len(buf) {
		k, err := syscall.Pread(fd, buf[got:], off+int64(got))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if k == 0 {
			break // shorter than it was a moment ago
		}
		got += k
	}
	return buf[:got], nil
}

// writeJSON writes v as indented JSON to a new file at path inside the
// list directory base.
func writeJSON(base, path string, v any) error {
	data, err := jsonRecord(v)
	if err != nil {
		return err
	}
	return writeNewFile(base, path, data)
}

// jsonRecord is v as the run folder's JSON files hold it: indented, with a
// final newline.
func jsonRecord(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	return append(data, '\n'), err
}

// mkdirRun makes the run folder dir inside the list directory base, and
// the folders on the way if need be, and opens it; made reports whether
// it made dir: a folder already there is used as it is. A link on the
// way, or at dir, fails (fsroot.ErrLink). An error with made set is that
// of the open of the folder made (replaced meanwhile).
func mkdirRun(base, dir string) (folder *fsroot.Dir, made bool, err error) {
	return fsroot.MkdirDir(base, dir)
}

// WriteJSONFile writes v as indented JSON, replacing path inside the list
// directory base atomically (a reader never sees half a file; a link there
// is replaced, not followed). It does not fsync: run folders are a record;
// the task file holds the state.
func WriteJSONFile(base, path string, v any) error {
	data, err := jsonRecord(v)
	if err != nil {
		return err
	}
	return fsroot.WriteFile(base, path, data)
}

// readRunFile reads the file called name in the run folder runDir,
// following no link from the list directory down (package fsroot), at
// most max bytes.
func readRunFile(runDir, name string, max int64) ([]byte, error) {
	base := runDir
	if i := strings.LastIndex(runDir, string(filepath.Separator)+area.Name+string(filepath.Separator)+"runs"+string(filepath.Separator)); i > 0 {
		base = runDir[:i]
	}
	return fsroot.ReadFile(base, filepath.Join(runDir, name), max)
}
