package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/taskd/taskd/bench/taskdrun"
)

// floorDoes says what the floor does for each task: the file-system and
// process work the contract requires of a task of `true`, done directly,
// without the daemon.
const floorDoes = "a Go process of its own reading N.json, writing it durably (a temporary file written, fsynced and renamed in, the list directory fsynced) as the claim before the agent starts and as the end after, making the run folder (two directories) with prompt.md, cmd.json and result.json in it (each renamed in, not fsynced, as the daemon writes them), starting `sh -c true` with os/exec in a process group of its own with its output on two pipes and waiting for it, and appending three event lines; no locks, no cgroup, no scheduling"

// floorEvents are the event lines the floor appends for each task: those
// the daemon appends for a task of `true` that succeeds.
var floorEvents = [...]string{"TaskAccepted", "TaskStarted", "TaskSucceeded"}

// A floorList is the list directory the floor works in, and what it keeps
// open across tasks, as the daemon does: the directory, the event log,
// the null device for the agents' input, and the shell's path.
type floorList struct {
	dir    int // the list directory, open
	events int // its event log, open to append
	null   *os.File
	sh     string
}

func openFloorList(list string) (*floorList, error) {
	dir, err := unix.Open(list, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", list, err)
	}
	l := &floorList{dir: dir, events: -1}
	if err := os.MkdirAll(filepath.Join(list, ".taskd", "runs"), 0o700); err != nil {
		l.close()
		return nil, err
	}
	if l.events, err = unix.Openat(dir, filepath.Join(".taskd", "events.jsonl"), unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_CLOEXEC, 0o600); err != nil {
		l.close()
		return nil, err
	}
	if l.null, err = os.Open(os.DevNull); err != nil {
		l.close()
		return nil, err
	}
	if l.sh, err = exec.LookPath("sh"); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

func (l *floorList) close() {
	unix.Close(l.dir)
	if l.events >= 0 {
		unix.Close(l.events)
	}
	if l.null != nil {
		l.null.Close()
	}
}

// floorTask does for the task id what the contract requires of a task of
// `true`, and nothing else (floorDoes).
func (l *floorList) floorTask(id string) error {
	file, run := id+".json", filepath.Join(".taskd", "runs", id, "1")
	task, err := l.read(file)
	if err != nil {
		return err
	}
	l.event(floorEvents[0], id)
	setState(task, "in_progress", map[string]any{"state": "running", "attempt": 1, "startedAt": time.Now(), "runDir": run})
	if err := l.replace(file, task, true); err != nil { // the claim, durable before the agent starts
		return fmt.Errorf("claim: %w", err)
	}
	for _, dir := range []string{filepath.Dir(run), run} {
		if err := unix.Mkdirat(l.dir, dir, 0o700); err != nil {
			return fmt.Errorf("mkdir %s: %w", dir, err)
		}
	}
	if err := l.create(filepath.Join(run, "prompt.md"), []byte("true")); err != nil {
		return err
	}
	cmd, wait, err := l.start()
	if err != nil {
		return err
	}
	// cmd.json once, with the process group a restart would stop.
	if err := l.replace(filepath.Join(run, "cmd.json"), map[string]any{"argv": cmd.Args, "pid": cmd.Process.Pid}, false); err != nil {
		wait()
		return err
	}
	l.event(floorEvents[1], id)
	if err := wait(); err != nil {
		return fmt.Errorf("sh -c true: %w", err)
	}
	result := map[string]any{"success": true, "exitCode": 0}
	if err := l.replace(filepath.Join(run, "result.json"), result, false); err != nil {
		return err
	}
	setState(task, "completed", map[string]any{"state": "succeeded", "finishedAt": time.Now(), "result": result})
	if err := l.replace(file, task, true); err != nil { // the end
		return fmt.Errorf("end: %w", err)
	}
	l.event(floorEvents[2], id)
	return nil
}

// start starts `sh -c true` in a process group of its own, its input the
// null device, its output and errors on two pipes; wait reads both to
// their end and waits for it.
func (l *floorList) start() (cmd *exec.Cmd, wait func() error, err error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, err
	}
	cmd = exec.Command(l.sh, "-c", "true")
	cmd.Args[0] = "sh"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = l.null, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	outW.Close() // the agent has them
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, nil, err
	}
	wait = func() error {
		drained := make(chan struct{})
		go func() { io.Copy(io.Discard, errR); close(drained) }()
		io.Copy(io.Discard, outR)
		<-drained
		outR.Close()
		errR.Close()
		return cmd.Wait()
	}
	return cmd, wait, nil
}

// setState sets a task's status and fields of its metadata.taskd.
func setState(task map[string]any, status string, fields map[string]any) {
	task["status"] = status
	meta, _ := task["metadata"].(map[string]any)
	taskd, _ := meta["taskd"].(map[string]any)
	if taskd == nil {
		return
	}
	for k, v := range fields {
		taskd[k] = v
	}
}

// read reads and parses the task file name.
func (l *floorList) read(name string) (map[string]any, error) {
	fd, err := unix.Openat(l.dir, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var task map[string]any
	if err := json.NewDecoder(f).Decode(&task); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return task, nil
}

// replace writes v as JSON to a temporary file beside name and renames
// it over name; durable, it fsyncs the file before and the list
// directory after (the task file is in it).
func (l *floorList) replace(name string, v any, durable bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp")
	fd, err := unix.Openat(l.dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	_, err = unix.Write(fd, data)
	if err == nil && durable {
		err = unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(l.dir, tmp, l.dir, name)
	}
	if err == nil && durable {
		err = unix.Fsync(l.dir)
	}
	if err != nil {
		return fmt.Errorf("replace %s: %w", name, err)
	}
	return nil
}

// create writes a new file.
func (l *floorList) create(name string, data []byte) error {
	fd, err := unix.Openat(l.dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	_, err = unix.Write(fd, data)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// event appends an event line, in one write, as the daemon's log does; a
// failure is the run's to notice (its lines are counted).
func (l *floorList) event(typ, id string) {
	line, _ := json.Marshal(struct {
		TS   time.Time `json:"ts"`
		Type string    `json:"type"`
		List string    `json:"list"`
		Task string    `json:"task"`
	}{time.Now(), typ, "bench", id})
	unix.Write(l.events, append(line, '\n'))
}

// floorMain is the floor process: in the list directories lists, each
// holding n task files 1.json … n.json, it says "ready" on its standard
// output once set up, waits for a line on its standard input, does the
// tasks with workers goroutines, each taking the next task of the list
// it works in (worker w in lists[w % len(lists)]), says "done" (or the
// first error), and waits for its input to end before it exits, idle, so
// that its CPU time can be read and a tracer detached.
func floorMain(lists []string, n, workers int) error {
	ls := make([]*floorList, len(lists))
	for i, list := range lists {
		l, err := openFloorList(list)
		if err != nil {
			return err
		}
		defer l.close()
		ls[i] = l
	}
	in := bufio.NewReader(os.Stdin)
	fmt.Println("ready")
	if _, err := in.ReadString('\n'); err != nil {
		return errors.New("no go-ahead on standard input")
	}
	next := make([]atomic.Int64, len(ls)) // the last task taken, by list
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			l, next := ls[w%len(ls)], &next[w%len(ls)]
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := l.floorTask(strconv.FormatInt(i, 10)); err != nil {
					next.Store(int64(n)) // the others stop too
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var err error
	for range workers {
		if werr := <-errs; err == nil {
			err = werr
		}
	}
	if err != nil {
		fmt.Println("failed:", err)
	} else {
		fmt.Println("done")
	}
	io.Copy(io.Discard, in)
	return err
}

// A floor is a floor process, run by this program from its own binary.
type floor struct {
	cmd   *exec.Cmd
	lists []string
	in    io.WriteCloser
	out   *bufio.Reader
}

// startFloor makes lists list directories in work, on the file system
// the daemons' roots are on, drops n tasks of true into them as the
// daemon's producer does (n/lists into each), and starts a floor process
// with workers workers there; it returns once the process is set up and
// idle.
func startFloor(work string, n, workers, lists int) (*floor, error) {
	root, err := os.MkdirTemp(work, "floor-")
	if err != nil {
		return nil, err
	}
	f := &floor{}
	for i := range lists {
		list := filepath.Join(root, "bench"+strconv.Itoa(i+1))
		if err := os.Mkdir(list, 0o700); err != nil {
			return nil, err
		}
		for j := 1; j <= n/lists; j++ {
			if err := taskdrun.Drop(list, strconv.Itoa(j), taskBody(j)); err != nil {
				return nil, err
			}
		}
		f.lists = append(f.lists, list)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	f.cmd = exec.Command(self, "-floor", strings.Join(f.lists, string(os.PathListSeparator)),
		"-n", strconv.Itoa(n/lists), "-concurrency", strconv.Itoa(workers))
	f.cmd.Stderr = os.Stderr
	if f.in, err = f.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := f.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	f.out = bufio.NewReader(out)
	if err := f.cmd.Start(); err != nil {
		return nil, err
	}
	if line, err := f.out.ReadString('\n'); line != "ready\n" {
		f.Stop()
		return nil, fmt.Errorf("the floor process did not start: %q, %v", line, err)
	}
	idle(f.Pid())
	return f, nil
}

func (f *floor) Pid() int { return f.cmd.Process.Pid }

// run lets the floor process do its tasks (n, as it was started with)
// and waits until it has.
func (f *floor) run(n int) error {
	if _, err := io.WriteString(f.in, "go\n"); err != nil {
		return err
	}
	line, err := f.out.ReadString('\n')
	if line != "done\n" {
		return fmt.Errorf("floor: %q, %v", line, err)
	}
	got := 0
	for _, list := range f.lists {
		got += taskdrun.Succeeded(list)
	}
	if got != n/len(f.lists)*len(f.lists) {
		return fmt.Errorf("floor: %d tasks succeeded of %d", got, n)
	}
	return nil
}

// Stop ends the floor process's input, so that it exits, and waits for it.
func (f *floor) Stop() {
	f.in.Close()
	f.cmd.Wait()
}
