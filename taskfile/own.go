package taskfile

import (
	"bytes"
	"sync"
	"syscall"
)

// ownWrites is what a long-running writer whose loop also reads the list
// (the daemon) remembers of its own writes: for each task file, the bytes
// its last write left and the file that write made (its inode, size and
// modification time), so that the loop, told of the write by a file
// event, need not read back what it wrote (Dir.Own), and those bytes
// parsed, once asked for, so that the loop and the job that wrote them,
// each looking at the task again, do not parse them again and again.
type ownWrites struct {
	mu    sync.Mutex
	m     map[string]*ownWrite
	bytes int // the raw bytes held in m
}

// An ownWrite is one task file as a write of this process left it.
type ownWrite struct {
	dev, ino uint64
	size     int64
	mtime    syscall.Timespec
	raw      []byte
	// parsed is raw parsed, nil until first asked for (parse). It is
	// never changed, and handed out only as copies; set under mu.
	parsed *Task
}

// maxOwnWrites and maxOwnBytes bound what is remembered: the writes of
// tasks that have ended, and of lists no longer served, are forgotten all
// at once past either.
const (
	maxOwnWrites = 4096
	maxOwnBytes  = 16 << 20
)

// RememberWrites makes d remember the bytes of its own writes of task
// files for Own. Call it before d is used.
func (d *Dir) RememberWrites() { d.own = &ownWrites{m: map[string]*ownWrite{}} }

// remember notes that task id's file is now tmp, whose contents are raw,
// if d remembers its writes; tmp was stated before it was renamed.
func (d *Dir) remember(id string, tmp *pendingFile, raw []byte) {
	if d.own == nil || !tmp.stated {
		return
	}
	w := &ownWrite{dev: tmp.st.Dev, ino: tmp.st.Ino, size: tmp.st.Size, mtime: tmp.st.Mtim, raw: raw}
	d.own.mu.Lock()
	if old, ok := d.own.m[id]; ok {
		d.own.bytes -= len(old.raw)
	}
	if len(d.own.m) >= maxOwnWrites || d.own.bytes+len(raw) > maxOwnBytes {
		clear(d.own.m)
		d.own.bytes = 0
	}
	d.own.m[id] = w
	d.own.bytes += len(raw)
	d.own.mu.Unlock()
}

// forgetWrite drops what remember noted of the write of tmp as task id's
// file, which did not take its place after all.
func (d *Dir) forgetWrite(id string, tmp *pendingFile) {
	if d.own == nil || !tmp.stated {
		return
	}
	d.own.mu.Lock()
	if w, ok := d.own.m[id]; ok && w.dev == tmp.st.Dev && w.ino == tmp.st.Ino {
		d.own.forget(id, w)
	}
	d.own.mu.Unlock()
}

// Own returns task id as this process's last write of its file left it,
// if the file is still the one that write made — the same inode, size and
// modification time — and the caller saw no write into the file in place
// (inPlace: a file event of a write, as Claude Code makes). A write in
// place changes the contents without a new inode: its modification time
// tells, unless it kept the size and came within the file system's clock
// tick of this process's write, which only the events can tell; a rename
// over the file makes a new inode. A write in place seen, or a file found
// changed, forgets the remembered write for good; else it is kept for the
// next call (the loop's event, the job's next look at its file). ok is
// false when the file must be read (Read).
func (d *Dir) Own(id string, inPlace bool) (t *Task, ok bool) {
	if d.own == nil {
		return nil, false
	}
	d.own.mu.Lock()
	w, found := d.own.m[id]
	if found && inPlace {
		d.own.forget(id, w)
	}
	d.own.mu.Unlock()
	if !found || inPlace || !ValidID(id) {
		return nil, false
	}
	path := d.File(id)
	var st syscall.Stat_t
	err := syscall.Lstat(path, &st)
	if err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Dev != w.dev || st.Ino != w.ino || st.Size != w.size || st.Mtim != w.mtime {
		d.own.mu.Lock()
		if cur, ok := d.own.m[id]; ok && cur.ino == w.ino && cur.mtime == w.mtime {
			d.own.forget(id, cur) // not a newer write made meanwhile
		}
		d.own.mu.Unlock()
		return nil, false
	}
	t, err = d.parse(w.raw, path, id)
	if err != nil {
		return nil, false
	}
	return t, true
}

// parse returns raw, bytes of task id's file at path, parsed: a copy of
// the task kept with this process's last write of the file if raw are
// that write's bytes (parsed once, for every caller), else parsed now.
// The task returned is the caller's to change.
func (d *Dir) parse(raw []byte, path, id string) (*Task, error) {
	if d.own == nil {
		return Parse(raw, path, id)
	}
	d.own.mu.Lock()
	w := d.own.m[id]
	var kept *Task
	if w != nil {
		kept = w.parsed
	}
	d.own.mu.Unlock()
	if w == nil || !bytes.Equal(w.raw, raw) {
		return Parse(raw, path, id)
	}
	if kept != nil {
		return kept.Clone(), nil
	}
	t, err := Parse(raw, path, id)
	if err != nil {
		return nil, err
	}
	kept = t.Clone()
	d.own.mu.Lock()
	if d.own.m[id] == w && w.parsed == nil {
		w.parsed = kept
	}
	d.own.mu.Unlock()
	return t, nil
}

// Current returns task id as its file holds it: as this process's last
// write of it left it, if the file is still the one that write made and
// no write in place has been seen since (Own), else read (Read). For a
// writer that holds no file events of its own (a job after its agent
// ran): a write in place that kept the size, within the file system's
// clock tick of its own write, is missed until its event comes, and its
// next Update's check under the locks finds it.
func (d *Dir) Current(id string) (*Task, error) {
	if t, ok := d.Own(id, false); ok {
		return t, nil
	}
	return d.Read(id)
}

// forget drops the remembered write w of task id. The caller holds mu.
func (o *ownWrites) forget(id string, w *ownWrite) {
	delete(o.m, id)
	o.bytes -= len(w.raw)
}

// stat notes the temporary file's inode, size and modification time,
// once its contents are written.
func (p *pendingFile) stat() {
	if p.fd < 0 {
		return
	}
	p.stated = syscall.Fstat(p.fd, &p.st) == nil
}
