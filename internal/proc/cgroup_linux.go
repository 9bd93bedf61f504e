package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// subtree is the name of the cgroup, in the daemon's own, that holds the
// attempts' cgroups.
const subtree = "taskd"

// newSupervisor finds where this process may make cgroups: its own cgroup
// v2 (under systemd, the service's, delegated to it by Delegate=yes), if
// it may write it. Otherwise, or when TASKD_SUPERVISION=environment, an
// attempt's processes are known by their environment.
func newSupervisor() *Supervisor {
	env := func(format string, args ...any) *Supervisor {
		return &Supervisor{mode: ByEnvironment, why: fmt.Sprintf(format, args...)}
	}
	if os.Getenv("TASKD_SUPERVISION") == "environment" {
		return env("TASKD_SUPERVISION=environment says not to use cgroups")
	}
	own, err := cgroupDir("self")
	if err != nil {
		return env("no cgroup v2 to use: %v", err)
	}
	base := filepath.Join(own, subtree)
	if err := usable(own, base); err != nil {
		return env("%v; under systemd, Delegate=yes in the service's unit gives it one (docs/service.md)", err)
	}
	if !kernelAtLeast(5, 7) {
		// Moved into its cgroup once started, a process could start
		// another before (a shell does, in a millisecond).
		return env("this kernel cannot start a process in a cgroup (clone3 CLONE_INTO_CGROUP, Linux 5.7)")
	}
	s := &Supervisor{mode: ByCgroup, base: base}
	if _, err := os.Stat(filepath.Join(base, "cgroup.kill")); err != nil {
		s.noKill = true
		if _, err := os.Stat(filepath.Join(base, "cgroup.freeze")); err != nil {
			return env("this kernel's cgroups have neither cgroup.kill nor cgroup.freeze")
		}
	}
	if err := s.probe(); err != nil {
		return env("a process cannot be started in a cgroup under %s: %v", base, err)
	}
	s.sweep(time.Minute)
	return s
}

// sweep removes the empty cgroups of attempts that a daemon which died
// left, made more than age ago: one made since may be about to take its
// agent (an attempt's cgroup has a process from the moment its agent
// starts, and one with a process is never removed).
func (s *Supervisor) sweep(age time.Duration) {
	entries, _ := os.ReadDir(s.base)
	for _, e := range entries {
		dir := filepath.Join(s.base, e.Name())
		if info, err := e.Info(); err != nil || !e.IsDir() || time.Since(info.ModTime()) < age || populated(dir) {
			continue
		}
		removeTree(dir)
	}
}

// usable makes the subtree base in the cgroup directory own, and reports
// why the daemon cannot use it: processes started in its cgroups move
// from own, which takes write access to own's cgroup.procs.
func usable(own, base string) error {
	if err := unix.Access(filepath.Join(own, "cgroup.procs"), unix.W_OK); err != nil {
		return fmt.Errorf("its cgroup %s is not writable (%v)", own, err)
	}
	if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot make a cgroup in %s (%v)", own, err)
	}
	return nil
}

// probe starts a process that does nothing in a cgroup of its own, as an
// attempt's agent is started, where such a program is found; else the
// checks so far stand.
func (s *Supervisor) probe() error {
	path, err := exec.LookPath("true")
	if err != nil {
		return nil
	}
	g := s.Group(fmt.Sprintf("TASKD_PROBE=%d", os.Getpid()))
	defer g.Close()
	if g.dir == "" {
		return g.degraded
	}
	waited, err := g.Start(exec.Command(path))
	if err != nil {
		return err
	}
	if err := <-waited; err != nil {
		return err
	}
	return g.degraded
}

// Group returns the group of the attempt whose processes carry marker
// (NAME=value) in their environment: a new cgroup of its own, or, where
// none can be made, the processes that carry marker.
func (s *Supervisor) Group(marker string) *Group {
	g := &Group{s: s, marker: marker, fd: -1}
	if s.mode != ByCgroup {
		return g
	}
	dir := filepath.Join(s.base, cgroupName(marker))
	for range 3 {
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, fs.ErrNotExist) {
			// Another taskd in this cgroup removed the subtree as it
			// stopped: make it again.
			err = os.Mkdir(s.base, 0o755)
			if err == nil || errors.Is(err, fs.ErrExist) {
				continue
			}
		}
		if err == nil || errors.Is(err, fs.ErrExist) {
			g.dir = dir
			return g
		}
		g.degraded = fmt.Errorf("make cgroup %s: %w", dir, err)
		break
	}
	return g
}

// prepare has cmd started in the group's cgroup.
func (g *Group) prepare(cmd *exec.Cmd) error {
	if g.dir == "" {
		return nil
	}
	fd, err := unix.Open(g.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open cgroup %s: %w", g.dir, err)
	}
	g.fd = fd
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	return nil
}

// started closes what prepare opened.
func (g *Group) started() {
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
}

// Kill kills every process of the group and waits, a few seconds at most,
// until none is left. It reports whether it found one.
func (g *Group) Kill() bool {
	if g.dir == "" {
		return killMarked(g.marker)
	}
	return killCgroup(g.dir, g.s.noKill)
}

// Close removes the group's cgroup once it is empty (Kill empties it).
func (g *Group) Close() error {
	if g.dir == "" {
		return nil
	}
	return removeCgroup(g.dir)
}

// KillLeftover kills what the attempt whose processes carry marker left
// running when the daemon that ran it died: its cgroup's processes (the
// cgroup recorded, if it is that attempt's, and the one this daemon would
// make for it), then every process carrying marker; its cgroups are
// removed. It reports whether a process was killed.
// Made reports whether the cgroup of the attempt whose processes carry
// marker is there: made, once its attempt had its slot, just before its
// agent started, and not yet removed (which its runner does once the
// agent has exited). Always false when attempts get no cgroups.
func (s *Supervisor) Made(marker string) bool {
	return s.mode == ByCgroup && isCgroup(filepath.Join(s.base, cgroupName(marker)))
}

func (s *Supervisor) KillLeftover(marker, recorded string) bool {
	name := cgroupName(marker)
	var dirs []string
	if recorded != "" && filepath.Base(recorded) == name && isCgroup(recorded) {
		dirs = append(dirs, filepath.Clean(recorded))
	}
	if s.mode == ByCgroup {
		if dir := filepath.Join(s.base, name); isCgroup(dir) && (len(dirs) == 0 || dirs[0] != dir) {
			dirs = append(dirs, dir)
		}
	}
	killed := false
	for _, dir := range dirs {
		killed = killCgroup(dir, !exists(filepath.Join(dir, "cgroup.kill"))) || killed
		removeCgroup(dir)
	}
	return killMarked(marker) || killed
}

// killWait bounds how long Kill waits for the killed to be gone.
const killWait = 10 * time.Second

// killCgroup kills every process of cgroup dir and its descendants, and
// waits until they are gone; it reports whether there was one.
func killCgroup(dir string, noKill bool) bool {
	if !populated(dir) {
		return false
	}
	if noKill {
		freezeKill(dir)
	} else if err := writeCgroupFile(dir, "cgroup.kill", "1"); err != nil {
		freezeKill(dir)
	}
	deadline := time.Now().Add(killWait)
	for populated(dir) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// freezeKill kills every process of cgroup dir where cgroup.kill cannot:
// frozen, none can start another while each is killed.
func freezeKill(dir string) {
	writeCgroupFile(dir, "cgroup.freeze", "1")
	deadline := time.Now().Add(2 * time.Second)
	for !eventIs(dir, "frozen 1") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		return nil
	})
	writeCgroupFile(dir, "cgroup.freeze", "0")
}

// removeCgroup removes cgroup dir and those made in it, once empty.
func removeCgroup(dir string) error {
	deadline := time.Now().Add(killWait)
	for {
		err := removeTree(dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", dir, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// removeTree removes the cgroups in dir, deepest first, then dir. Most
// attempts make no cgroup of their own: dir alone is tried first.
func removeTree(dir string) error {
	if err := unix.Rmdir(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeTree(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return unix.Rmdir(dir)
}

// populated reports whether cgroup dir or one in it has a process.
func populated(dir string) bool { return eventIs(dir, "populated 1") }

// eventIs reports whether cgroup dir's cgroup.events has line.
func eventIs(dir, line string) bool {
	data, err := ReadKernelFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return false
	}
	return bytes.Contains(append([]byte{'\n'}, data...), []byte("\n"+line+"\n"))
}

// ReadKernelFile reads a small file the kernel makes up as it is read (in
// /proc, or a cgroup's) with a bare descriptor: open, read until the end,
// close. (os.ReadFile adds a stat and the runtime poller's attempt to
// register the file, a handful of system calls each time, for every
// attempt.)
func ReadKernelFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// isCgroup reports whether dir is a cgroup v2 directory.
func isCgroup(dir string) bool {
	var st unix.Statfs_t
	return filepath.IsAbs(dir) && unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC && exists(filepath.Join(dir, "cgroup.events"))
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// writeCgroupFile writes value to the cgroup file name of dir.
func writeCgroupFile(dir, name, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// cgroupDir returns the directory of process pid's cgroup v2 ("self": this
// process): the cgroup v2 file system's mount point, and the path
// /proc/<pid>/cgroup gives below the cgroup that mount shows.
func cgroupDir(pid string) (string, error) {
	mount, mountRoot, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join("/proc", pid, "cgroup"))
	if err != nil {
		return "", err
	}
	var path string
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if !strings.HasPrefix(path, "/") {
		return "", errors.New("no cgroup v2 in /proc/" + pid + "/cgroup")
	}
	rel, err := filepath.Rel(mountRoot, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("cgroup %s is not under the cgroup v2 mount at %s (which shows %s)", path, mount, mountRoot)
	}
	return filepath.Join(mount, rel), nil
}

// cgroup2Mount returns where the cgroup v2 file system is mounted (on a
// hybrid layout, not at /sys/fs/cgroup) and the cgroup it shows there.
func cgroup2Mount() (dir, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mount-point options [optional…] - type source super-options
		before, after, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(after, "cgroup2 ") {
			continue
		}
		f := strings.Fields(before)
		if len(f) >= 5 {
			return unescapeMount(f[4]), unescapeMount(f[3]), nil
		}
	}
	return "", "", errors.New("no cgroup v2 file system is mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// kernelAtLeast reports whether the running kernel is version major.minor
// or later.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	var ma, mi int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi)
	return ma > major || ma == major && mi >= minor
}

// SupervisionOf says how the daemon with process id pid keeps its
// attempts' processes together, as far as this process can tell from
// outside: by cgroup if it has made its subtree of cgroups, else by
// environment. With pid 0 it says what a daemon started by this process
// would do, changing nothing.
func SupervisionOf(pid int) (Mode, string) {
	who, proc := "the daemon's", strconv.Itoa(pid)
	if pid == 0 {
		who, proc = "this process's", "self"
	}
	if (pid == 0 && os.Getenv("TASKD_SUPERVISION") == "environment") || (pid > 0 && hasMarker(pid, "TASKD_SUPERVISION=environment")) {
		return ByEnvironment, "TASKD_SUPERVISION=environment says not to use cgroups"
	}
	own, err := cgroupDir(proc)
	if err != nil {
		return ByEnvironment, fmt.Sprintf("no cgroup v2 to use: %v", err)
	}
	base := filepath.Join(own, subtree)
	switch {
	case pid > 0 && isCgroup(base):
		return ByCgroup, "each attempt in a cgroup of its own under " + base
	case pid > 0:
		return ByEnvironment, fmt.Sprintf("%s cgroup %s holds no cgroups of its own (not writable to it)", who, own)
	}
	if err := unix.Access(filepath.Join(own, "cgroup.procs"), unix.W_OK); err != nil {
		return ByEnvironment, fmt.Sprintf("%s cgroup %s is not writable (%v)", who, own, err)
	}
	return ByCgroup, "each attempt in a cgroup of its own under " + base
}

// Close removes s's subtree of cgroups if it is empty (another taskd in
// the same cgroup may use it still).
func (s *Supervisor) Close() {
	if s.mode == ByCgroup {
		unix.Rmdir(s.base)
	}
}
