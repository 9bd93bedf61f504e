package taskfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/taskd/taskd/internal/fsroot"
)

// ErrInvalidID is returned, wrapped in a *fs.PathError, for an id that
// cannot name a task file.
var ErrInvalidID = errors.New("invalid task id (want 1-128 of A-Z a-z 0-9 _ -)")

// Dir is one task list: a directory of <id>.json task files.
//
// Reads take no lock (files are only ever replaced by rename, so a reader
// sees a whole file). Update and Create hold the list's locks (see Update)
// for the few milliseconds of a read-modify-write; they never hold them while
// a caller's agent runs, because fn is expected to be quick.
//
// A Dir is safe for concurrent use by multiple goroutines; Dirs opened on the
// same directory, in one process or several, exclude each other.
type Dir struct {
	path   string
	mu     *sync.Mutex
	spares *lockSpares // kept lock directories (KeepLockDirs); nil: made and removed
	own    *ownWrites  // the bytes of its own writes (RememberWrites); nil: none
	kept   *keptLock   // the list's lock file kept open (KeepLockOpen); nil: opened per write
}

// replaceHooks holds the functions BeforeReplace gave, and
// foundNothingHooks those WhenReplaceFindsNoFile gave, by list directory;
// hooked counts them, so that a write looks for one only while a test
// has set one.
var (
	replaceHooks      sync.Map // cleaned absolute path → func(id string)
	foundNothingHooks sync.Map // likewise
	hooked            atomic.Int32
)

// BeforeReplace makes every write of a task file of the list directory
// dir by this process (Update, UpdateFrom, Swap, through any Dir opened
// on it) call fn, with the task's id, just before its new contents take
// the file's place: holding every lock, the file found as the write
// expects; and every Remove, just before it takes the file out. It is the one moment of a write no writer that takes the
// locks can act in, for a test to act in as one that takes none does (a
// person's rm). The returned function removes fn.
func BeforeReplace(dir string, fn func(id string)) (remove func()) {
	return setHook(&replaceHooks, dir, fn)
}

// WhenReplaceFindsNoFile is BeforeReplace for the moment after a write
// found no file to put its new contents in place of (removed since its
// check) and before it looks whether one is there again.
func WhenReplaceFindsNoFile(dir string, fn func(id string)) (remove func()) {
	return setHook(&foundNothingHooks, dir, fn)
}

func setHook(hooks *sync.Map, dir string, fn func(id string)) (remove func()) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	hooks.Store(abs, fn)
	hooked.Add(1)
	return sync.OnceFunc(func() {
		hooks.Delete(abs)
		hooked.Add(-1)
	})
}

// callHook calls the function of hooks set for d, if any.
func (d *Dir) callHook(hooks *sync.Map, id string) {
	if hooked.Load() == 0 {
		return
	}
	if fn, ok := hooks.Load(d.path); ok {
		fn.(func(string))(id)
	}
}

// Open returns the list at path, which must be an existing directory.
func Open(path string) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: abs, Err: syscall.ENOTDIR}
	}
	return &Dir{path: abs, mu: dirMutex(abs)}, nil
}

// Path returns the directory's absolute path.
func (d *Dir) Path() string { return d.path }

// File returns the path of task id's file.
func (d *Dir) File(id string) string { return filepath.Join(d.path, id+".json") }

// Read reads and parses task id. A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist); a file taskd will not accept is a
// *BadFileError. Read never modifies the file.
func (d *Dir) Read(id string) (*Task, error) {
	if !ValidID(id) {
		return nil, &fs.PathError{Op: "read", Path: d.File(id), Err: ErrInvalidID}
	}
	return readFile(d.File(id), id)
}

// ReadFile reads and parses the task file at path, whose stem must be the
// task's id. Errors are as for Dir.Read.
func ReadFile(path string) (*Task, error) {
	return readFile(path, strings.TrimSuffix(filepath.Base(path), ".json"))
}

func readFile(path, stem string) (*Task, error) {
	data, err := readBytes(path, nil)
	if err != nil {
		return nil, err
	}
	return Parse(data, path, stem)
}

// ReadRaw returns the bytes of task id's file, read into buf (reused when
// it is large enough), refusing what Read refuses before it parses (a
// link, not a regular file, another user's, too large): for a caller that
// parses only what changed (Parse, with bytes it may keep).
func (d *Dir) ReadRaw(id string, buf []byte) ([]byte, error) {
	if !ValidID(id) {
		return nil, &fs.PathError{Op: "read", Path: d.File(id), Err: ErrInvalidID}
	}
	return readBytes(d.File(id), buf)
}

func readBytes(path string, buf []byte) ([]byte, error) {
	data, _, err := readIdentified(path, buf)
	return data, err
}

// A fileID says which file a read read: its device and inode.
type fileID struct{ dev, ino uint64 }

// readIdentified is readBytes, also returning which file it read (known
// once the file is open, whatever else fails).
func readIdentified(path string, buf []byte) ([]byte, fileID, error) {
	f, err := openTask(path)
	if err != nil {
		return nil, fileID{}, err
	}
	data, err := readOpen(path, f, buf)
	return data, fileID{f.dev, f.ino}, err
}

// readOpen reads the task file f, open at path, into buf, and closes it.
func readOpen(path string, f taskFile, buf []byte) ([]byte, error) {
	defer f.close()
	if f.size > MaxSize {
		return nil, badFile(path, ErrTooLarge, "Task files hold at most 1 MiB; move large inputs into separate files and reference them (for example with /read).",
			"the file is %d bytes, larger than the 1 MiB limit", f.size)
	}
	data := buf[:0]
	if int64(cap(data)) < f.size+1 {
		data = make([]byte, 0, f.size+1)
	}
	data, err := readWhole(f, data)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return data, nil
}

// readWhole reads the open task file f into data, whose capacity is more
// than the file's size when it was opened. A first read that returns
// exactly that size, less than it asked for, has reached the file's end:
// a local file system fills a read of a regular file up to its end, so a
// second read only to be told so is not made. Otherwise (the file grew
// or shrank since) it reads on as readAll does.
func readWhole(f taskFile, data []byte) ([]byte, error) {
	n, err := f.Read(data[len(data):cap(data)])
	if err != nil && err != io.EOF {
		return data, err
	}
	data = data[:len(data)+n]
	if err == io.EOF || int64(len(data)) == f.size && len(data) < cap(data) {
		return data, nil
	}
	return readAll(f, data)
}

// taskFile is a task file open for reading: a bare descriptor, read with
// plain system calls. (An *os.File would try, and fail, to register a
// regular file with Go's network poller on every open: five system calls
// more for each of the several reads a task's run makes.)
type taskFile struct {
	fd       int
	size     int64
	dev, ino uint64 // which file it is
}

// Read reads from the file; at its end it returns io.EOF.
func (f taskFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(f.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f taskFile) close() { syscall.Close(f.fd) }

// openTask opens the task file at path for reading, refusing what is not a
// regular file. O_NOFOLLOW refuses symlinks and O_NONBLOCK keeps a FIFO from
// blocking the open; the checks on the open descriptor cannot be raced.
// Errors are *fs.PathError, or *BadFileError for what is not a task file.
func openTask(path string) (taskFile, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK):
			return taskFile{}, badFile(path, ErrSymlink, "Copy the task into the list as a regular file; taskd does not follow links.",
				"the file is a symbolic link")
		case errors.Is(err, syscall.ENXIO):
			// Opening a Unix socket fails with ENXIO.
			return taskFile{}, badFile(path, ErrNotRegular, "Replace it with a regular JSON file.", "the file is not a regular file (a socket)")
		}
		return taskFile{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return taskFile{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return taskFile{}, badFile(path, ErrNotRegular, "Replace it with a regular JSON file.", "the file is not a regular file (%s)", fsroot.ModeType(uint32(st.Mode)))
	}
	if uid := fsroot.EUID(); int(st.Uid) != uid {
		// Whoever owns it could make taskd run commands as this user.
		syscall.Close(fd)
		return taskFile{}, badFile(path, ErrNotOwned,
			fmt.Sprintf("If you trust its contents, make it yours: cp %s %s.new && mv %s.new %s (as uid %d); taskd reads only its own user's task files.", path, path, path, path, uid),
			"the file belongs to another user (uid %d; taskd runs as uid %d), who could make taskd run commands as you", st.Uid, uid)
	}
	return taskFile{fd: fd, size: st.Size, dev: uint64(st.Dev), ino: st.Ino}, nil
}

// readAll reads r into buf, stopping one byte past MaxSize.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 512)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || len(buf) > MaxSize {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// List returns the ids of the task files in the directory, numeric ids first
// in numeric order, then the others in byte order. Names that are not
// <id>.json (dot-files, temporary files, lock directories) are skipped.
func (d *Dir) List() ([]string, error) {
	f, err := fsroot.OpenDirectory(d.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "list", Path: d.path, Err: err}
	}
	ids := names[:0]
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".json"); ok && ValidID(id) {
			ids = append(ids, id)
		}
	}
	SortIDs(ids)
	return ids, nil
}

// SortIDs sorts task ids as Claude Code lists them: numeric ids first, by
// value, then the rest in byte order.
func SortIDs(ids []string) {
	slices.SortFunc(ids, CompareIDs)
}

// CompareIDs orders task ids as SortIDs does, returning -1, 0 or +1.
func CompareIDs(a, b string) int {
	na, ea := strconv.ParseUint(a, 10, 64)
	nb, eb := strconv.ParseUint(b, 10, 64)
	switch {
	case ea == nil && eb == nil:
		if na != nb {
			if na < nb {
				return -1
			}
			return 1
		}
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return strings.Compare(a, b)
}
