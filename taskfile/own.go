package taskfile

import (
	"sync"
	"syscall"
)

// ownWrites is what a long-running writer whose loop also reads the list
// (the daemon) remembers of its own writes: for each task file, the bytes
// its last write left and the file that write made (its inode, size and
// modification time), so that the loop, told of the write by a file
// event, need not read back what it wrote (Dir.Own).
type ownWrites struct {
	mu sync.Mutex
	m  map[string]ownWrite
}

// An ownWrite is one task file as a write of this process left it.
type ownWrite struct {
	dev, ino uint64
	size     int64
	mtime    syscall.Timespec
	raw      []byte
}

// maxOwnWrites bounds what is remembered: writes the loop is never told
// of (a list it stopped serving) are forgotten all at once past it.
const maxOwnWrites = 4096

// RememberWrites makes d remember the bytes of its own writes of task
// files for Own. Call it before d is used.
func (d *Dir) RememberWrites() { d.own = &ownWrites{m: map[string]ownWrite{}} }

// remember notes that task id's file is now tmp, whose contents are raw,
// if d remembers its writes; tmp was stated before it was renamed.
func (d *Dir) remember(id string, tmp *pendingFile, raw []byte) {
	if d.own == nil || !tmp.stated {
		return
	}
	w := ownWrite{dev: tmp.st.Dev, ino: tmp.st.Ino, size: tmp.st.Size, mtime: tmp.st.Mtim, raw: raw}
	d.own.mu.Lock()
	if len(d.own.m) >= maxOwnWrites {
		clear(d.own.m)
	}
	d.own.m[id] = w
	d.own.mu.Unlock()
}

// Own returns task id as this process's last write of its file left it,
// if the file is still the one that write made — the same inode, size and
// modification time — and the caller saw no write into the file in place
// (inPlace: a file event of a write, as Claude Code makes). A write in
// place changes the contents without a new inode, so only the caller's
// events can tell; a rename over the file makes a new inode. The
// remembered write is used once: each call forgets it. ok is false when
// the file must be read (Read).
func (d *Dir) Own(id string, inPlace bool) (t *Task, ok bool) {
	if d.own == nil {
		return nil, false
	}
	d.own.mu.Lock()
	w, found := d.own.m[id]
	delete(d.own.m, id)
	d.own.mu.Unlock()
	if !found || inPlace || !ValidID(id) {
		return nil, false
	}
	path := d.File(id)
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return nil, false
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Dev != w.dev || st.Ino != w.ino || st.Size != w.size || st.Mtim != w.mtime {
		return nil, false
	}
	t, err := Parse(w.raw, path, id)
	if err != nil {
		return nil, false
	}
	return t, true
}

// stat notes the temporary file's inode, size and modification time,
// once its contents are written.
func (p *pendingFile) stat() {
	if p.fd < 0 {
		return
	}
	p.stated = syscall.Fstat(p.fd, &p.st) == nil
}
